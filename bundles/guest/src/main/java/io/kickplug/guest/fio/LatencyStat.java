package io.kickplug.guest.fio;

import org.HdrHistogram.Histogram;

/**
 * One latency series in nanoseconds (slat, clat or lat of one direction): exact count, min, max, mean and
 * sample standard deviation (Welford, as fio), and an HdrHistogram (3 significant digits, auto-resizing)
 * for percentiles. Not thread-safe: a job records on its own vCPU thread, and results are merged after.
 */
public final class LatencyStat {

    /** fio's default percentile list (percentile_list). */
    public static final double[] FIO_PERCENTILES = {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9,
        99.95, 99.99};

    private final Histogram histogram = new Histogram(3);
    private long count;
    private long min = Long.MAX_VALUE;
    private long max;
    private double mean;
    private double m2;

    public LatencyStat() {
        histogram.setAutoResize(true);
    }

    public void record(long nanos) {
        long v = Math.max(0, nanos);
        histogram.recordValue(v);
        count++;
        min = Math.min(min, v);
        max = Math.max(max, v);
        double delta = v - mean;
        mean += delta / count;
        m2 += delta * (v - mean);
    }

    /** Adds another series (Chan et al.'s parallel variance), as fio's group reporting sums job stats. */
    public void add(LatencyStat other) {
        if (other.count == 0) {
            return;
        }
        histogram.add(other.histogram);
        long n = count + other.count;
        double delta = other.mean - mean;
        m2 += other.m2 + delta * delta * count * other.count / n;
        mean += delta * other.count / n;
        count = n;
        min = Math.min(min, other.min);
        max = Math.max(max, other.max);
    }

    public long count() {
        return count;
    }

    public long min() {
        return count == 0 ? 0 : min;
    }

    public long max() {
        return max;
    }

    public double mean() {
        return mean;
    }

    public double stddev() {
        return count < 2 ? 0 : Math.sqrt(m2 / (count - 1));
    }

    /** The value at percentile {@code p} (0..100), 0 when empty. */
    public long percentile(double p) {
        return count == 0 ? 0 : histogram.getValueAtPercentile(p);
    }
}
