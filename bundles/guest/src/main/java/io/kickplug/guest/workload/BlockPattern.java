package io.kickplug.guest.workload;

/**
 * The deterministic data a pass writes: every 8-byte word of block {@code b} in run {@code seed} is a
 * SplitMix64 hash of (seed, b, word index), so every block differs from every other block and from the
 * same block in another run, and a stale, shifted or zero block is detected.
 */
public final class BlockPattern {

    private final long seed;

    public BlockPattern(long seed) {
        this.seed = seed;
    }

    /** Fills {@code dst[0..length)} (length a multiple of 8) with block {@code block}'s pattern. */
    public void fill(long block, byte[] dst, int length) {
        long base = mix(seed ^ mix(block + 0x5DEECE66DL));
        for (int word = 0; word < length / 8; word++) {
            long v = mix(base + word * 0x9E3779B97F4A7C15L);
            int at = word * 8;
            for (int i = 0; i < 8; i++) {
                dst[at + i] = (byte) (v >>> (8 * i));
            }
        }
    }

    /** Whether {@code actual[0..length)} is block {@code block}'s pattern; {@code scratch} is overwritten. */
    public boolean matches(long block, byte[] actual, int length, byte[] scratch) {
        fill(block, scratch, length);
        return java.util.Arrays.equals(actual, 0, length, scratch, 0, length);
    }

    /** SplitMix64's finalizer. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
