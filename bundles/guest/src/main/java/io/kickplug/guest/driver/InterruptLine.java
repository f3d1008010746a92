package io.kickplug.guest.driver;

import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.guest.transport.InterruptRouting;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The guest's interrupt controller for one device: {@link #raise} (called on a device I/O thread) latches
 * a pending flag and unparks the vCPU thread waiting in {@link #await}. Raising never blocks. Once the
 * driver has its {@link InterruptRouting}, each raised MSI-X vector also latches its cause
 * ({@link #takeCauses()}).
 */
public final class InterruptLine implements GuestInterrupts {

    private final AtomicBoolean pending = new AtomicBoolean();
    private final AtomicInteger causes = new AtomicInteger();
    private final AtomicLong raised = new AtomicLong();
    private volatile Thread waiter;
    private volatile InterruptRouting routing;

    /** The routing that says what each vector means; {@code null} while there is none. */
    public void route(InterruptRouting r) {
        this.routing = r;
    }

    @Override
    public void raise(int vector) {
        raised.incrementAndGet();
        InterruptRouting r = routing;
        if (r != null) {
            int cause = r.cause(vector);
            if (cause != 0) {
                causes.getAndAccumulate(cause, (a, b) -> a | b);
            }
        }
        pending.set(true);
        Thread t = waiter;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Takes the causes the raised vectors said since the last call (0 for a line, which has to be read). */
    public int takeCauses() {
        return causes.getAndSet(0);
    }

    /** Takes the pending flag: true when an interrupt arrived since the last take. */
    public boolean take() {
        return pending.getAndSet(false);
    }

    /**
     * Waits until an interrupt is pending (and takes it) or the deadline ({@link System#nanoTime()} based)
     * passes. Only one thread may wait at a time.
     *
     * @return true when an interrupt was taken, false on timeout
     */
    public boolean await(long deadlineNanos) {
        if (take()) {
            return true;
        }
        waiter = Thread.currentThread();
        try {
            while (!take()) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                LockSupport.parkNanos(this, left);
            }
            return true;
        } finally {
            waiter = null;
        }
    }

    /** Interrupts raised so far. */
    public long raisedCount() {
        return raised.get();
    }
}
