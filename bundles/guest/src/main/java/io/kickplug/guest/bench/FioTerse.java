package io.kickplug.guest.bench;

import java.util.Locale;

/**
 * One line of fio's terse output, version 3 ({@code --output-format=terse --terse-version=3}, fio's HOWTO
 * "Terse output"), as the real guest's fio prints it with {@code group_reporting}: semicolon-separated, the
 * read block from field 6 and the write block 41 fields later (each: KiB, bandwidth, IOPS, runtime, submission
 * latency min/max/mean/dev, completion latency min/max/mean/dev, 20 completion-latency percentiles
 * "P%=usec", total latency min/max/mean/dev, bandwidth min/max/agg/mean/dev). Latencies are microseconds.
 *
 * @param job the job (group) name
 * @param error fio's error field (0: none)
 * @param readIops read IOPS
 * @param writeIops write IOPS
 * @param clatMeanUs completion latency mean, weighted by each direction's IOPS
 * @param clatP99Us the larger of the directions' 99th completion-latency percentiles (NaN when absent)
 * @param latMeanUs total latency mean (submission to completion), weighted by IOPS
 * @param runtimeMs the longer of the directions' runtimes
 */
public record FioTerse(String job, int error, double readIops, double writeIops, double clatMeanUs,
        double clatP99Us, double latMeanUs, long runtimeMs) {

    private static final int READ = 5;
    private static final int BLOCK = 41;
    private static final int IOPS = 2;
    private static final int RUNTIME = 3;
    private static final int CLAT_MEAN = 10;
    private static final int PERCENTILES = 12;
    private static final int LAT_MEAN = 34;

    /** Read plus write IOPS. */
    public double iops() {
        return readIops + writeIops;
    }

    /**
     * Parses one terse v3 line.
     *
     * @throws IllegalArgumentException naming what is wrong (not version 3, too few fields, a field not a number)
     */
    public static FioTerse parse(String line) {
        if (line == null) {
            throw new IllegalArgumentException("no fio terse line");
        }
        String[] f = line.trim().split(";", -1);
        if (!f[0].equals("3")) {
            throw new IllegalArgumentException("not fio terse version 3 output: '" + abbreviate(line) + "'");
        }
        if (f.length < READ + 2 * BLOCK) {
            throw new IllegalArgumentException("fio terse line with " + f.length + " fields, expected at least "
                    + (READ + 2 * BLOCK) + ": '" + abbreviate(line) + "'");
        }
        double rIops = number(f, READ + IOPS);
        double wIops = number(f, READ + BLOCK + IOPS);
        double total = rIops + wIops;
        double clat = weighted(rIops, number(f, READ + CLAT_MEAN), wIops, number(f, READ + BLOCK + CLAT_MEAN));
        double lat = weighted(rIops, number(f, READ + LAT_MEAN), wIops, number(f, READ + BLOCK + LAT_MEAN));
        double p99 = Double.NaN;
        for (int block : new int[] {READ, READ + BLOCK}) {
            if (number(f, block + IOPS) <= 0 && total > 0) {
                continue;
            }
            double v = percentile(f, block, "99.000000%");
            if (!Double.isNaN(v) && (Double.isNaN(p99) || v > p99)) {
                p99 = v;
            }
        }
        long runtime = Math.max((long) number(f, READ + RUNTIME), (long) number(f, READ + BLOCK + RUNTIME));
        return new FioTerse(f[2], (int) number(f, 4), rIops, wIops, clat, p99, lat, runtime);
    }

    private static double weighted(double w1, double v1, double w2, double v2) {
        return w1 + w2 <= 0 ? Double.NaN : (w1 * v1 + w2 * v2) / (w1 + w2);
    }

    /** The value of the percentile labelled {@code label} ("99.000000%") in a block, NaN when not there. */
    private static double percentile(String[] f, int block, String label) {
        for (int i = block + PERCENTILES; i < block + PERCENTILES + 20; i++) {
            int eq = f[i].indexOf('=');
            if (eq > 0 && f[i].substring(0, eq).equals(label)) {
                return number(f[i].substring(eq + 1), i);
            }
        }
        return Double.NaN;
    }

    private static double number(String[] f, int index) {
        return number(f[index], index);
    }

    private static double number(String s, int index) {
        try {
            return Double.parseDouble(s.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "fio terse field %d is not a number: '%s'", index + 1, s));
        }
    }

    private static String abbreviate(String line) {
        return line.length() <= 80 ? line : line.substring(0, 77) + "...";
    }
}
