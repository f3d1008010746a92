package io.kickplug.vhost.backend;

import java.util.Arrays;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Pages marked in a dirty log, kept apart from any log: the marks a session's log still held when the session ended
 * (the front-end had not collected them), carried into the log of the export's next session. Immutable; the
 * non-zero 64-bit words of the bitmap, by word index ascending (word {@code w} bit {@code b} is page
 * {@code 64 w + b}, as in {@link DirtyLog}).
 */
public final class DirtyMarks {

    /**
     * At most this many non-zero words are kept (16 bytes each in memory and in a file: 16 MiB), up to 64 Mi pages
     * (256 GiB of guest memory written since the front-end's last collection). Marks past it are dropped, and the
     * one who keeps them logs it ({@link #of}).
     */
    public static final int MAX_WORDS = 1 << 20;

    private static final DirtyMarks NONE = new DirtyMarks(new long[0], new long[0]);

    private final long[] words;
    private final long[] bits;

    /**
     * @param words word indices, strictly ascending, non-negative
     * @param bits the words' bits, none 0
     * @throws IllegalArgumentException when that does not hold, or for more than {@link #MAX_WORDS} words
     */
    public DirtyMarks(long[] words, long[] bits) {
        if (words.length != bits.length || words.length > MAX_WORDS) {
            throw new IllegalArgumentException(words.length + " word indices and " + bits.length + " words (at most "
                    + MAX_WORDS + ")");
        }
        for (int i = 0; i < words.length; i++) {
            if (words[i] < 0 || (i > 0 && words[i] <= words[i - 1])) {
                throw new IllegalArgumentException("word index " + words[i] + " at " + i + " is negative or not"
                        + " above the one before it");
            }
            if (bits[i] == 0) {
                throw new IllegalArgumentException("word " + words[i] + " has no bit set");
            }
        }
        this.words = words.clone();
        this.bits = bits.clone();
    }

    public static DirtyMarks none() {
        return NONE;
    }

    /** The marks of the given pages (tests). */
    public static DirtyMarks ofPages(Iterable<Long> pages) {
        java.util.TreeMap<Long, Long> w = new java.util.TreeMap<>();
        for (long p : pages) {
            w.merge(p >>> 6, 1L << (p & 63), (a, b) -> a | b);
        }
        return new DirtyMarks(w.keySet().stream().mapToLong(Long::longValue).toArray(),
                w.values().stream().mapToLong(Long::longValue).toArray());
    }

    /**
     * The bits set in {@code b} now, read word by word (each read atomic: the front-end may be clearing them), at
     * most {@link #MAX_WORDS} words; {@code dropped[0]} gets the pages of the words past that bound.
     */
    static DirtyMarks of(DirtyLog.Bitmap b, long[] dropped) {
        long count = (b.pages() + 63) >>> 6;
        long[] w = new long[16];
        long[] v = new long[16];
        int n = 0;
        long lost = 0;
        for (long i = 0; i < count; i++) {
            long x = b.word(i);
            if (x == 0) {
                continue;
            }
            if (n == MAX_WORDS) {
                lost += Long.bitCount(x);
                continue;
            }
            if (n == w.length) {
                w = Arrays.copyOf(w, n * 2);
                v = Arrays.copyOf(v, n * 2);
            }
            w[n] = i;
            v[n++] = x;
        }
        dropped[0] = lost;
        return n == 0 ? NONE : new DirtyMarks(Arrays.copyOf(w, n), Arrays.copyOf(v, n));
    }

    /**
     * These marks and {@code other}'s; words past {@link #MAX_WORDS} are dropped, their pages added to
     * {@code dropped[0]}.
     */
    public DirtyMarks or(DirtyMarks other, long[] dropped) {
        long[] w = new long[Math.min(MAX_WORDS, words.length + other.words.length)];
        long[] v = new long[w.length];
        int i = 0;
        int j = 0;
        int n = 0;
        long lost = 0;
        while (i < words.length || j < other.words.length) {
            long word;
            long x;
            if (j == other.words.length || (i < words.length && words[i] < other.words[j])) {
                word = words[i];
                x = bits[i++];
            } else if (i == words.length || other.words[j] < words[i]) {
                word = other.words[j];
                x = other.bits[j++];
            } else {
                word = words[i];
                x = bits[i++] | other.bits[j++];
            }
            if (n == w.length) {
                lost += Long.bitCount(x);
                continue;
            }
            w[n] = word;
            v[n++] = x;
        }
        dropped[0] += lost;
        return new DirtyMarks(Arrays.copyOf(w, n), Arrays.copyOf(v, n));
    }

    /**
     * Sets every mark in {@code b} (an atomic OR per word) as far as it reaches; returns the pages past its end,
     * which are not set.
     */
    long orInto(DirtyLog.Bitmap b) {
        long beyond = 0;
        for (int i = 0; i < words.length; i++) {
            long first = words[i] << 6;
            long x = bits[i];
            if (first + 64 > b.pages()) {
                // The last word the bitmap covers may be partial; every bitmap holds whole words (size % 8 == 0).
                long inside = Math.max(0, b.pages() - first);
                long keep = inside >= 64 ? -1L : (1L << inside) - 1;
                beyond += Long.bitCount(x & ~keep);
                x &= keep;
            }
            if (x != 0) {
                b.orWord(words[i], x);
            }
        }
        return beyond;
    }

    public boolean isEmpty() {
        return words.length == 0;
    }

    /** Pages marked. */
    public long pages() {
        long n = 0;
        for (long x : bits) {
            n += Long.bitCount(x);
        }
        return n;
    }

    /** Non-zero words. */
    public int wordCount() {
        return words.length;
    }

    /** Word index {@code i} (ascending). */
    public long word(int i) {
        return words[i];
    }

    /** The bits of word {@code i}. */
    public long bits(int i) {
        return bits[i];
    }

    /** The marked pages, ascending (tests, messages). */
    public SortedSet<Long> pageSet() {
        SortedSet<Long> out = new TreeSet<>();
        for (int i = 0; i < words.length; i++) {
            long x = bits[i];
            while (x != 0) {
                out.add((words[i] << 6) + Long.numberOfTrailingZeros(x));
                x &= x - 1;
            }
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DirtyMarks m && Arrays.equals(words, m.words) && Arrays.equals(bits, m.bits);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(words) + Arrays.hashCode(bits);
    }

    @Override
    public String toString() {
        return pages() + " pages";
    }
}
