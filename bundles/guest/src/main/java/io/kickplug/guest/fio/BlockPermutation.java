package io.kickplug.guest.fio;

/**
 * A seeded bijection of [0, n): fio's random map without the map. A 4-round balanced Feistel network
 * permutes [0, 2^2h) with 2^2h the smallest even power of two at least n, and cycle walking (re-applying it
 * while the result is at least n) restricts it to [0, n). So walking i = 0..n-1 visits every block exactly
 * once per pass, in an order that depends only on the seed, with O(1) memory whatever the disk size.
 */
public final class BlockPermutation {

    private static final int ROUNDS = 4;

    private final long n;
    private final int half;
    private final long mask;
    private final long[] keys = new long[ROUNDS];

    public BlockPermutation(long n, long seed) {
        if (n < 1) {
            throw new IllegalArgumentException("permutation of " + n + " elements");
        }
        int bits = 64 - Long.numberOfLeadingZeros(Math.max(1, n - 1));
        this.half = Math.max(1, (bits + 1) / 2);
        this.mask = (1L << half) - 1;
        this.n = n;
        for (int r = 0; r < ROUNDS; r++) {
            keys[r] = OffsetGenerator.mix(seed + 0x632BE59BD9B4E019L * (r + 1));
        }
    }

    public long size() {
        return n;
    }

    /** The i-th element of the permutation, {@code 0 <= i < n}. */
    public long apply(long i) {
        if (i < 0 || i >= n) {
            throw new IndexOutOfBoundsException("index " + i + " of a permutation of " + n);
        }
        long x = i;
        do {
            x = encrypt(x);
        } while (x >= n);
        return x;
    }

    private long encrypt(long x) {
        long left = x >>> half;
        long right = x & mask;
        for (int r = 0; r < ROUNDS; r++) {
            long next = left ^ (OffsetGenerator.mix(right ^ keys[r]) & mask);
            left = right;
            right = next;
        }
        return (left << half) | right;
    }
}
