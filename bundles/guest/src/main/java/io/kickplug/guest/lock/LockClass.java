package io.kickplug.guest.lock;

import io.kickplug.api.guest.LockStatRow;

/**
 * The statistics of one lock class (all locks of one name), as Linux's lock_stat keeps them per class.
 * Updated by the lock's holder, read by anyone; each update and the snapshot are atomic with respect to each
 * other (a monitor, uncontended in practice because the holder of the instrumented lock is the only writer).
 */
public final class LockClass {

    private final String name;
    private long conBounces;
    private long contentions;
    private long waitMin = Long.MAX_VALUE;
    private long waitMax;
    private long waitTotal;
    private long acqBounces;
    private long acquisitions;
    private long holdMin = Long.MAX_VALUE;
    private long holdMax;
    private long holdTotal;

    LockClass(String name) {
        this.name = name;
    }

    public String name() {
        return name;
    }

    /** A contention: the acquirer found the lock held; {@code bounce} when it last went to another vCPU. */
    synchronized void contended(boolean bounce) {
        contentions++;
        if (bounce) {
            conBounces++;
        }
    }

    /** An acquisition; {@code waitNanos} is -1 for an uncontended one (no wait time is recorded then). */
    synchronized void acquired(boolean bounce, long waitNanos) {
        acquisitions++;
        if (bounce) {
            acqBounces++;
        }
        if (waitNanos >= 0) {
            waitMin = Math.min(waitMin, waitNanos);
            waitMax = Math.max(waitMax, waitNanos);
            waitTotal += waitNanos;
        }
    }

    synchronized void released(long holdNanos) {
        holdMin = Math.min(holdMin, holdNanos);
        holdMax = Math.max(holdMax, holdNanos);
        holdTotal += holdNanos;
    }

    /** Minimums read 0 while nothing was recorded, as in /proc/lock_stat. */
    public synchronized LockStatRow snapshot() {
        return new LockStatRow(name, conBounces, contentions, contentions == 0 ? 0 : waitMin, waitMax, waitTotal,
                acqBounces, acquisitions, holdMin == Long.MAX_VALUE ? 0 : holdMin,
                holdMax, holdTotal);
    }

    public synchronized void reset() {
        conBounces = 0;
        contentions = 0;
        waitMin = Long.MAX_VALUE;
        waitMax = 0;
        waitTotal = 0;
        acqBounces = 0;
        acquisitions = 0;
        holdMin = Long.MAX_VALUE;
        holdMax = 0;
        holdTotal = 0;
    }
}
