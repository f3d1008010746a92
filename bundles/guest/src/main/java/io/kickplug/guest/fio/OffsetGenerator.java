package io.kickplug.guest.fio;

import java.util.SplittableRandom;

/**
 * Where a job's next I/O goes, fio-style, over the job's region of the disk.
 * <ul>
 * <li>Sequential modes walk the region from its start; a block that would cross the region's end is cut
 * to what is left (in multiples of the smallest block size), and a pass ends at the region's end.</li>
 * <li>Random modes with the random map (the default) visit every smallest-block-size unit of the region
 * exactly once per pass, in a seeded order ({@link BlockPermutation}); with {@code norandommap} every
 * offset is drawn independently, so blocks repeat and others are missed, and a pass ends after the
 * region's size in bytes has been issued.</li>
 * <li>Block sizes: fixed {@code bs}, or with {@code bsrange} drawn uniformly from the range and rounded
 * down to a multiple of the low end when it is a power of two (fio's rule), else of 512.</li>
 * <li>Mixed modes (rw, randrw) choose read or write per I/O, reads with probability rwmixread %.</li>
 * </ul>
 * Everything random comes from the job's seed, so a job with the same seed issues the same sequence.
 */
public final class OffsetGenerator {

    /** One I/O to issue. */
    public record Io(long offset, int length, boolean write) {
    }

    private final RwMode rw;
    private final JobSpec.Region region;
    private final int bsMin;
    private final int bsMax;
    private final int rwmixread;
    private final boolean randomMap;
    private final SplittableRandom random;
    private final BlockPermutation permutation;
    private final long units;
    private long passIndex;
    private long passBytes;
    private long position;
    private int passes;

    public OffsetGenerator(RwMode rw, JobSpec.Region region, int bsMin, int bsMax, int rwmixread, long seed,
            boolean norandommap) {
        this.rw = rw;
        this.region = region;
        this.bsMin = bsMin;
        this.bsMax = bsMax;
        this.rwmixread = rwmixread;
        this.units = region.length() / bsMin;
        if (units < 1) {
            throw new IllegalArgumentException("region " + region + " holds no block of " + bsMin + " bytes");
        }
        this.random = new SplittableRandom(seed);
        this.randomMap = rw.random() && !norandommap;
        this.permutation = randomMap ? new BlockPermutation(units, mix(seed ^ 0x5851F42D4C957F2DL)) : null;
        this.position = region.start();
    }

    public static OffsetGenerator of(JobSpec job, JobSpec.Region region) {
        return new OffsetGenerator(job.rw(), region, job.bsMin(), job.bsMax(), job.rwmixread(), job.randseed(),
                job.norandommap());
    }

    /** Passes completed so far. */
    public int passes() {
        return passes;
    }

    /** The next I/O; passes roll over by themselves (see {@link #passes()}). */
    public Io next() {
        boolean write = rw.mixed() ? random.nextInt(100) >= rwmixread : rw.writes();
        int length = blockSize();
        long offset;
        if (!rw.random()) {
            offset = position;
        } else if (randomMap) {
            offset = region.start() + permutation.apply(passIndex) * bsMin;
        } else {
            offset = region.start() + random.nextLong(units) * bsMin;
        }
        long room = region.end() - offset;
        if (length > room) {
            length = (int) (room - room % bsMin);
        }
        if (!rw.random()) {
            position = offset + length;
            if (position + bsMin > region.end()) {
                endPass();
            }
        } else if (randomMap) {
            if (++passIndex == units) {
                endPass();
            }
        } else {
            passBytes += length;
            if (passBytes >= region.length()) {
                endPass();
            }
        }
        return new Io(offset, length, write);
    }

    private void endPass() {
        passes++;
        passIndex = 0;
        passBytes = 0;
        position = region.start();
    }

    private int blockSize() {
        if (bsMin == bsMax) {
            return bsMin;
        }
        int bs = bsMin + random.nextInt(bsMax - bsMin + 1);
        int align = Integer.bitCount(bsMin) == 1 ? bsMin : 512;
        return Math.max(bsMin, bs - bs % align);
    }

    /** SplitMix64's finalizer. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
