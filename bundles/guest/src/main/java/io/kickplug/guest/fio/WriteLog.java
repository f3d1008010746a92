package io.kickplug.guest.fio;

/**
 * Which write is expected where, for verifying a write job: per smallest-block-size unit of the region,
 * the length and rand_seed of the last write that started there. A write clears the entries it overlaps,
 * so after overlapping writes (bsrange across passes) only blocks still whole on disk are verified.
 */
final class WriteLog {

    /** Units a log may hold (16 Mi units: 128 MiB of seeds); larger verify regions are refused. */
    static final long MAX_UNITS = 1L << 24;

    private final long start;
    private final int unit;
    private final int maxUnitsPerBlock;
    private final long[] seeds;
    private final int[] lengths;

    WriteLog(JobSpec.Region region, int bsMin, int bsMax) {
        long units = region.length() / bsMin;
        if (units > MAX_UNITS) {
            throw new FioOptionException("verify region of " + region.length() + " bytes holds " + units
                    + " blocks of " + bsMin + " bytes; verify keeps at most " + MAX_UNITS + " (use a smaller size)");
        }
        this.start = region.start();
        this.unit = bsMin;
        this.maxUnitsPerBlock = (bsMax + bsMin - 1) / bsMin;
        this.seeds = new long[(int) units];
        this.lengths = new int[(int) units];
    }

    void record(long offset, int length, long seed) {
        int first = index(offset);
        int covered = (length + unit - 1) / unit;
        // A block that started before this one and reaches into it is no longer whole.
        for (int i = Math.max(0, first - maxUnitsPerBlock + 1); i < first; i++) {
            if (lengths[i] > 0 && start + (long) i * unit + lengths[i] > offset) {
                lengths[i] = 0;
            }
        }
        for (int i = first + 1; i < Math.min(lengths.length, first + covered); i++) {
            lengths[i] = 0;
        }
        seeds[first] = seed;
        lengths[first] = length;
    }

    /** The next logged unit at or after {@code from}, or -1. */
    int next(int from) {
        for (int i = from; i < lengths.length; i++) {
            if (lengths[i] > 0) {
                return i;
            }
        }
        return -1;
    }

    long offset(int index) {
        return start + (long) index * unit;
    }

    int length(int index) {
        return lengths[index];
    }

    long seed(int index) {
        return seeds[index];
    }

    private int index(long offset) {
        return (int) ((offset - start) / unit);
    }
}
