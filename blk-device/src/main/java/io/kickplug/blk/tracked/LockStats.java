package io.kickplug.blk.tracked;

import io.kickplug.api.guest.LockStatRow;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Lock statistics in the spirit of Linux lockstat: acquisitions, contended acquisitions, wait times of
 * contended acquisitions, hold times, and bounces (an acquisition on another thread than the previous
 * acquirer's; for the device, threads play the part of CPUs). Thread-safe; cheap enough to stay on in the
 * I/O path: acquisitions, contentions, waits and bounces are counted exactly, hold times are sampled (one
 * acquisition in {@code TrackedLock.HOLD_SAMPLE}; min and max are of the samples, the total is estimated).
 */
public final class LockStats {

    private final LongAdder acquisitions = new LongAdder();
    private final LongAdder contentions = new LongAdder();
    private final LongAdder waitNanos = new LongAdder();
    private final AtomicLong minWaitNanos = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong maxWaitNanos = new AtomicLong();
    private final LongAdder holdNanos = new LongAdder();
    private final AtomicLong minHoldNanos = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong maxHoldNanos = new AtomicLong();
    private final LongAdder acqBounces = new LongAdder();
    private final LongAdder conBounces = new LongAdder();

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
        min(minWaitNanos, nanos);
        max(maxWaitNanos, nanos);
    }

    /** The lock was taken on another thread than the previous acquirer's; {@code contended}: after waiting. */
    void bounced(boolean contended) {
        acqBounces.increment();
        if (contended) {
            conBounces.increment();
        }
    }

    /** The lock was held for {@code nanos}. */
    void held(long nanos) {
        heldSample(nanos, 1);
    }

    /** A sampled hold of {@code nanos}, standing for {@code weight} acquisitions in the total. */
    void heldSample(long nanos, int weight) {
        holdNanos.add(nanos * weight);
        min(minHoldNanos, nanos);
        max(maxHoldNanos, nanos);
    }

    private static void max(AtomicLong a, long v) {
        long cur = a.get();
        while (v > cur && !a.compareAndSet(cur, v)) {
            cur = a.get();
        }
    }

    private static void min(AtomicLong a, long v) {
        long cur = a.get();
        while (v < cur && !a.compareAndSet(cur, v)) {
            cur = a.get();
        }
    }

    public Snapshot snapshot() {
        return new Snapshot(acquisitions.sum(), contentions.sum(), waitNanos.sum(), maxHoldNanos.get());
    }

    /** The counters as one row of the lock statistics table. */
    public LockStatRow row(String name) {
        long minWait = minWaitNanos.get();
        long minHold = minHoldNanos.get();
        return new LockStatRow(name, conBounces.sum(), contentions.sum(), minWait == Long.MAX_VALUE ? 0 : minWait,
                maxWaitNanos.get(), waitNanos.sum(), acqBounces.sum(), acquisitions.sum(),
                minHold == Long.MAX_VALUE ? 0 : minHold, maxHoldNanos.get(), holdNanos.sum());
    }

    /** Zeroes the counters (not atomic with concurrent updates, like writing 0 to /proc/lock_stat). */
    public void reset() {
        acquisitions.reset();
        contentions.reset();
        waitNanos.reset();
        minWaitNanos.set(Long.MAX_VALUE);
        maxWaitNanos.set(0);
        holdNanos.reset();
        minHoldNanos.set(Long.MAX_VALUE);
        maxHoldNanos.set(0);
        acqBounces.reset();
        conBounces.reset();
    }
}
