package io.kickplug.api.lockstat;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters of one lock class, as Linux's lock_stat keeps them per class: acquisitions, contentions, wait
 * times of contended acquisitions, hold times, and bounces (an event on another CPU than the last acquirer's;
 * the guest's vCPUs or the device's threads play the part of CPUs). Thread-safe and cheap enough to stay on in
 * the I/O path: updates are {@link LongAdder} additions (the acquisition count: striped atomic adds) and CAS loops
 * on the extremes. A {@link #row} read while the lock is in use may mix counts of before and after one update, as
 * /proc/lock_stat does.
 * A user that times every hold (two {@code System.nanoTime} calls) may sample instead: {@link #releasedSample}
 * records one timed hold standing for several (the device's tracked-requests lock times one in 16).
 */
public final class LockCounters {

    private static final int STRIPES = 8;

    /**
     * Acquisitions, the one counter every acquisition updates: striped over padded cells picked by the thread's id
     * (LongAdder's idea), each increment one atomic add of an {@link AtomicLong}, an intrinsic. A LongAdder's CAS
     * is a VarHandle call, which the JIT leaves out of line (a call through its guards) when the lock is taken at
     * the bottom of a deep call chain, as the device's tracked-requests lock is on its I/O thread (issue 12).
     */
    private final Cell[] acquisitions = new Cell[STRIPES];
    private final LongAdder contentions = new LongAdder();
    private final LongAdder waitNanos = new LongAdder();
    private final AtomicLong minWaitNanos = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong maxWaitNanos = new AtomicLong();
    private final LongAdder holdNanos = new LongAdder();
    private final AtomicLong minHoldNanos = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong maxHoldNanos = new AtomicLong();
    private final LongAdder acqBounces = new LongAdder();
    private final LongAdder conBounces = new LongAdder();

    public LockCounters() {
        for (int i = 0; i < STRIPES; i++) {
            acquisitions[i] = new Cell();
        }
    }

    /** An {@link AtomicLong} padded to a cache line of its own, so threads on different cells do not share one. */
    @SuppressWarnings("unused")
    private static final class Cell extends AtomicLong {
        private static final long serialVersionUID = 1L;
        long p1;
        long p2;
        long p3;
        long p4;
        long p5;
        long p6;
        long p7;
    }

    /** A contention: the acquirer found the lock held; {@code bounce} when it was last acquired elsewhere. */
    public void contended(boolean bounce) {
        contentions.increment();
        if (bounce) {
            conBounces.increment();
        }
    }

    /**
     * An acquisition; {@code bounce} when the lock was last acquired elsewhere. {@code waitNanos} is the wait of a
     * contended acquisition, or negative for an uncontended one (no wait time is recorded then).
     */
    public void acquired(boolean bounce, long waitNanos) {
        acquisitions[(int) Thread.currentThread().getId() & (STRIPES - 1)].incrementAndGet();
        if (bounce) {
            acqBounces.increment();
        }
        if (waitNanos >= 0) {
            this.waitNanos.add(waitNanos);
            min(minWaitNanos, waitNanos);
            max(maxWaitNanos, waitNanos);
        }
    }

    /** The lock was held for {@code nanos}, from acquired to released. */
    public void released(long nanos) {
        releasedSample(nanos, 1);
    }

    /**
     * A sampled hold of {@code nanos}, standing for {@code weight} acquisitions in the hold-time total (min and
     * max are of the samples; the total is an estimate).
     */
    public void releasedSample(long nanos, int weight) {
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

    /** The counters as one row of the table; minimums read 0 while nothing was recorded, as in /proc/lock_stat. */
    public LockStatRow row(String name) {
        long minWait = minWaitNanos.get();
        long minHold = minHoldNanos.get();
        long acquired = 0;
        for (Cell c : acquisitions) {
            acquired += c.get();
        }
        return new LockStatRow(name, conBounces.sum(), contentions.sum(), minWait == Long.MAX_VALUE ? 0 : minWait,
                maxWaitNanos.get(), waitNanos.sum(), acqBounces.sum(), acquired,
                minHold == Long.MAX_VALUE ? 0 : minHold, maxHoldNanos.get(), holdNanos.sum());
    }

    /** Zeroes the counters (not atomic with concurrent updates, like writing 0 to /proc/lock_stat). */
    public void reset() {
        for (Cell c : acquisitions) {
            c.set(0);
        }
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
