package io.kickplug.guest.lock;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * A spinlock-like lock for the simulated guest's vCPU threads (Linux's {@code spinlock_t} of a virtqueue),
 * instrumented as lock_stat instruments kernel locks.
 *
 * <p>Waiting: a contended acquirer spins ({@link Thread#onSpinWait()}) for {@link #SPIN_ITERATIONS} attempts,
 * then keeps trying with {@link Thread#yield()} between attempts. It never parks: a kernel spinlock waiter
 * does not sleep either, and wait times stay those of a spinning CPU. The yield is there because vCPU threads
 * may outnumber host cores, and a waiter that only spins could keep the holder (busy in a simulated exit)
 * off the CPU.
 *
 * <p>Statistics, per {@link LockClass}: an acquisition that finds the lock held is a contention and records
 * its wait time (from the failed first attempt to the acquisition); every acquisition records its hold time
 * (acquired to released). A bounce is an event on a vCPU other than the one that last acquired the lock (the
 * first acquisition ever is no bounce), counted for contentions (con-bounces) and for acquisitions
 * (acq-bounces), as lockdep compares {@code lock->cpu} with the current CPU.
 *
 * <p>Not reentrant; only the holder may unlock.
 */
public final class SpinLock {

    /** Busy spins before a contended waiter starts yielding. */
    public static final int SPIN_ITERATIONS = 1000;
    private static final int NO_CPU = Integer.MIN_VALUE;

    private final LockClass stats;
    private final LongSupplier clock;
    private final AtomicReference<Thread> owner = new AtomicReference<>();
    /** vCPU of the last acquisition; written by the holder, read racily by contenders (as lockdep does). */
    private volatile int lastCpu = NO_CPU;
    private long acquiredAt;
    private final AtomicInteger spinning = new AtomicInteger();

    public SpinLock(LockClass stats) {
        this(stats, SpinLock::threadClock);
    }

    /** The current thread's clock: virtual time on a vCPU of a virtual-time machine, else System.nanoTime. */
    private static long threadClock() {
        LockWaits w = LockWaits.current();
        return w == null ? System.nanoTime() : w.now();
    }

    /** With another clock, for tests that script time. */
    public SpinLock(LockClass stats, LongSupplier clock) {
        this.stats = stats;
        this.clock = clock;
    }

    public LockClass lockClass() {
        return stats;
    }

    /** Acquires the lock on behalf of vCPU {@code cpu}. */
    public void lock(int cpu) {
        Thread me = Thread.currentThread();
        if (owner.get() == me) {
            throw new IllegalStateException("lock " + stats.name() + " is not reentrant");
        }
        if (owner.compareAndSet(null, me)) {
            acquired(cpu, -1);
            return;
        }
        long start = clock.getAsLong();
        int last = lastCpu;
        stats.contended(last != NO_CPU && last != cpu);
        spinning.incrementAndGet();
        LockWaits virtual = LockWaits.current();
        try {
            // In virtual time the waiter waits until the holder releases, at the holder's (virtual) release time.
            while (virtual != null) {
                if (owner.get() == null && owner.compareAndSet(null, me)) {
                    break;
                }
                virtual.await(this);
            }
            for (int i = 0; virtual == null; i++) {
                if (owner.get() == null && owner.compareAndSet(null, me)) {
                    break;
                }
                if (i < SPIN_ITERATIONS) {
                    Thread.onSpinWait();
                } else {
                    Thread.yield();
                }
            }
        } finally {
            spinning.decrementAndGet();
        }
        acquired(cpu, Math.max(0, clock.getAsLong() - start));
    }

    private void acquired(int cpu, long waitNanos) {
        int last = lastCpu;
        stats.acquired(last != NO_CPU && last != cpu, waitNanos);
        lastCpu = cpu;
        acquiredAt = clock.getAsLong();
    }

    /** Releases the lock, recording the hold time. */
    public void unlock() {
        if (owner.get() != Thread.currentThread()) {
            throw new IllegalMonitorStateException("lock " + stats.name() + " is not held by this thread");
        }
        stats.released(Math.max(0, clock.getAsLong() - acquiredAt));
        owner.set(null);
        LockWaits virtual = LockWaits.current();
        if (virtual != null) {
            virtual.released(this);
        }
    }

    public boolean isHeldByCurrentThread() {
        return owner.get() == Thread.currentThread();
    }

    /** Threads spinning for the lock now (they recorded their contention already). */
    public int waiters() {
        return spinning.get();
    }
}
