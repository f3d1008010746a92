package io.kickplug.blk.tracked;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Minimal lock statistics in the spirit of Linux lockstat: acquisitions, contended acquisitions, total
 * time spent waiting and the longest hold. Thread-safe; cheap enough to stay on in the I/O path.
 */
public final class LockStats {

    private final LongAdder acquisitions = new LongAdder();
    private final LongAdder contentions = new LongAdder();
    private final LongAdder waitNanos = new LongAdder();
    private final AtomicLong maxHoldNanos = new AtomicLong();

    /** A snapshot of the counters. */
    public record Snapshot(long acquisitions, long contentions, long totalWaitNanos, long maxHoldNanos) {
    }

    /** The lock was taken without waiting. */
    void acquired() {
        acquisitions.increment();
    }

    /** The lock was taken after waiting {@code nanos} for another holder. */
    void acquiredAfterWait(long nanos) {
        acquisitions.increment();
        contentions.increment();
        waitNanos.add(nanos);
    }

    /** The lock was held for {@code nanos}. */
    void held(long nanos) {
        long max = maxHoldNanos.get();
        while (nanos > max && !maxHoldNanos.compareAndSet(max, nanos)) {
            max = maxHoldNanos.get();
        }
    }

    public Snapshot snapshot() {
        return new Snapshot(acquisitions.sum(), contentions.sum(), waitNanos.sum(), maxHoldNanos.get());
    }
}
