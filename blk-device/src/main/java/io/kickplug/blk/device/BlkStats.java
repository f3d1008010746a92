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

    /** A request ended with {@code outcome}; {@code diskBytes} moved to or from the backend. */
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
        end();
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
