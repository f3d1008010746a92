package io.kickplug.throttle;

import java.util.function.LongSupplier;

/**
 * QEMU's throttling algorithm ({@code util/throttle.c}, {@code docs/throttle.txt}): six leaky buckets. Each request
 * adds its units (1 for an iops bucket, its bytes for a bps bucket) to the total bucket and to the read or write
 * bucket of its kind; buckets leak at {@code avg} per second. A request must wait while any of its buckets is
 * fuller than its size: {@code avg / 10} without a burst limit (100 ms of I/O at the average rate), or
 * {@code max * length} with one; with a length above 1 a second level, leaking at {@code max}, keeps the burst
 * itself at {@code max} per second (a size of {@code max / 10}). The wait is how long the bucket needs to leak
 * the excess. Not thread-safe: {@link ThrottleGroup} serialises it. Time comes from a clock in nanoseconds, a
 * fake one in tests.
 */
final class ThrottleState {

    private final LongSupplier clock;
    private ThrottleLimits limits = ThrottleLimits.NONE;
    private final double[] level = new double[6];
    private final double[] burstLevel = new double[6];
    private long previous;

    ThrottleState(LongSupplier clock) {
        this.clock = clock;
        this.previous = clock.getAsLong();
    }

    /** New limits; the levels start again from empty (QEMU's throttle_config). */
    void configure(ThrottleLimits l) {
        limits = l;
        java.util.Arrays.fill(level, 0);
        java.util.Arrays.fill(burstLevel, 0);
        previous = clock.getAsLong();
    }

    ThrottleLimits limits() {
        return limits;
    }

    /**
     * Admits a request of {@code bytes} (returns 0, and accounts it) or returns how many nanoseconds to wait before
     * asking again.
     */
    long admit(boolean write, long bytes) {
        long now = clock.getAsLong();
        leak(now - previous);
        previous = now;
        int bps = write ? ThrottleLimits.BPS_WRITE : ThrottleLimits.BPS_READ;
        int ops = write ? ThrottleLimits.OPS_WRITE : ThrottleLimits.OPS_READ;
        long wait = Math.max(Math.max(waitOf(ThrottleLimits.BPS_TOTAL), waitOf(bps)),
                Math.max(waitOf(ThrottleLimits.OPS_TOTAL), waitOf(ops)));
        if (wait > 0) {
            return wait;
        }
        account(ThrottleLimits.BPS_TOTAL, bytes);
        account(bps, bytes);
        account(ThrottleLimits.OPS_TOTAL, 1);
        account(ops, 1);
        return 0;
    }

    private void leak(long deltaNs) {
        if (deltaNs <= 0) {
            return;
        }
        for (int i = 0; i < 6; i++) {
            level[i] = Math.max(level[i] - limits.avg()[i] * (double) deltaNs / 1e9, 0);
            if (limits.length()[i] > 1) {
                burstLevel[i] = Math.max(burstLevel[i] - limits.max()[i] * (double) deltaNs / 1e9, 0);
            }
        }
    }

    private void account(int i, double units) {
        level[i] += units;
        if (limits.length()[i] > 1) {
            burstLevel[i] += units;
        }
    }

    /** QEMU's throttle_compute_wait for one bucket. */
    private long waitOf(int i) {
        double avg = limits.avg()[i];
        if (avg == 0) {
            return 0;
        }
        double max = limits.max()[i];
        double bucketSize;
        double burstBucketSize;
        if (max == 0) {
            bucketSize = avg / 10;
            burstBucketSize = 0;
        } else {
            bucketSize = max * limits.length()[i];
            burstBucketSize = max / 10;
        }
        double extra = level[i] - bucketSize;
        if (extra > 0) {
            return (long) Math.ceil(extra * 1e9 / avg);
        }
        if (limits.length()[i] > 1) {
            extra = burstLevel[i] - burstBucketSize;
            if (extra > 0) {
                return (long) Math.ceil(extra * 1e9 / max);
            }
        }
        return 0;
    }
}
