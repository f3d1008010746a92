package io.kickplug.guest.fio;

import java.util.Arrays;

/**
 * Completions of a job over time, in bins of {@link #BIN_NANOS} from the job's start (its own clock, virtual or
 * real): the "IOPS over time" of {@code kp:fio --html}. Not thread-safe: a job records on its own vCPU thread, and
 * results are merged after. At most {@link #MAX_BINS} bins (an hour); later completions go to the last one.
 */
public final class IopsTimeline {

    public static final long BIN_NANOS = 10_000_000L;
    static final int MAX_BINS = 360_000;

    private long[] bins = new long[16];
    private int used;

    /** One completion {@code sinceStartNanos} after the job's start. */
    public void record(long sinceStartNanos) {
        int bin = (int) Math.min(MAX_BINS - 1, Math.max(0, sinceStartNanos / BIN_NANOS));
        if (bin >= bins.length) {
            bins = Arrays.copyOf(bins, Math.max(bin + 1, Math.min(MAX_BINS, bins.length * 2)));
        }
        bins[bin]++;
        used = Math.max(used, bin + 1);
    }

    /** Adds {@code other}'s completions bin by bin (jobs of a group started together). */
    public void add(IopsTimeline other) {
        for (int i = 0; i < other.used; i++) {
            if (other.bins[i] != 0) {
                if (i >= bins.length) {
                    bins = Arrays.copyOf(bins, Math.max(i + 1, bins.length * 2));
                }
                bins[i] += other.bins[i];
            }
        }
        used = Math.max(used, other.used);
    }

    /** Bins with completions so far (the last one partial). */
    public int bins() {
        return used;
    }

    /** Completions in bin {@code i}. */
    public long count(int i) {
        return i < used ? bins[i] : 0;
    }
}
