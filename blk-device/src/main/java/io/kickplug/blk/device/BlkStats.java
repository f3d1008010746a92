package io.kickplug.blk.device;

import io.kickplug.blk.request.Outcome;
import io.kickplug.blk.request.RequestType;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** Request counters of one disk, kept across device resets. Thread-safe. */
public final class BlkStats {

    private final LongAdder completed = new LongAdder();
    private final LongAdder ioErrors = new LongAdder();
    private final LongAdder unsupported = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final AtomicLong inFlight = new AtomicLong();
    private final Object idle = new Object();
    private volatile int idleWaiters;

    /** A request was taken from a queue. */
    void begin() {
        inFlight.incrementAndGet();
    }

    /**
     * A request ended with {@code outcome}; {@code diskBytes} moved to or from the backend. It stays in flight
     * until {@link #released()}: its chain is not back with the driver yet.
     */
    void complete(RequestType kind, Outcome outcome, long diskBytes) {
        completed.increment();
        switch (outcome) {
            case IOERR -> ioErrors.increment();
            case UNSUPP -> unsupported.increment();
            case OK -> {
                if (kind == RequestType.IN) {
                    bytesRead.add(diskBytes);
                } else if (kind == RequestType.OUT) {
                    bytesWritten.add(diskBytes);
                }
            }
        }
    }

    /**
     * A completed request's chain is in the used ring (or the ring is broken): the request is no longer in
     * flight. A reset that waits in {@link #awaitIdle} then reads each queue's indices, so this must come
     * after the used-ring push: counted out before it, a reset saved a used index one short and the next
     * activation wrote over the pushed entry (issue 13: a completion lost across a vhost-user restart).
     */
    void released() {
        end();
    }

    /** {@code n} requests were released at once (a batch whose used index was published): one atomic update. */
    void released(int n) {
        if (n > 0 && inFlight.addAndGet(-n) == 0 && idleWaiters > 0) {
            synchronized (idle) {
                idle.notifyAll();
            }
        }
    }

    /** A request was taken but never completed, because its chain was malformed. */
    void abandon() {
        end();
    }

    private void end() {
        if (inFlight.decrementAndGet() == 0 && idleWaiters > 0) {
            synchronized (idle) {
                idle.notifyAll();
            }
        }
    }

    /** Waits until no request is in flight; returns false on timeout. */
    boolean awaitIdle(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        synchronized (idle) {
            idleWaiters++;
            try {
                while (inFlight.get() != 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    TimeUnit.NANOSECONDS.timedWait(idle, left);
                }
                return true;
            } finally {
                idleWaiters--;
            }
        }
    }

    public long requestsCompleted() {
        return completed.sum();
    }

    public long requestsInFlight() {
        return inFlight.get();
    }

    public long ioErrors() {
        return ioErrors.sum();
    }

    public long unsupported() {
        return unsupported.sum();
    }

    public long bytesRead() {
        return bytesRead.sum();
    }

    public long bytesWritten() {
        return bytesWritten.sum();
    }
}
