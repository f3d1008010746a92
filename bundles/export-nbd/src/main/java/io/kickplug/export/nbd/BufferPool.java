package io.kickplug.export.nbd;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Data buffers of requests: direct buffers of power-of-two sizes from 512 bytes to {@value #MAX_POOLED} bytes are
 * kept for reuse (the socket and an O_DIRECT file read and write them without a copy), up to {@value #MAX_KEPT} bytes
 * in all; larger requests get a heap buffer of their own. Only ever asked for lengths the request checks allowed.
 * Thread-safe.
 */
final class BufferPool {

    static final int MIN_CLASS = 512;
    static final int MAX_POOLED = 128 * 1024;
    static final long MAX_KEPT = 16L << 20;

    @SuppressWarnings("unchecked")
    private final ArrayDeque<ByteBuffer>[] free = new ArrayDeque[Integer.numberOfTrailingZeros(MAX_POOLED)
            - Integer.numberOfTrailingZeros(MIN_CLASS) + 1];
    private long kept;

    BufferPool() {
        for (int i = 0; i < free.length; i++) {
            free[i] = new ArrayDeque<>();
        }
    }

    private static int classOf(int capacity) {
        int size = Math.max(MIN_CLASS, Integer.highestOneBit(capacity - 1) << 1);
        return Integer.numberOfTrailingZeros(size) - Integer.numberOfTrailingZeros(MIN_CLASS);
    }

    /** A buffer with position 0 and limit {@code length}. */
    ByteBuffer take(int length) {
        if (length <= MAX_POOLED) {
            int c = classOf(Math.max(1, length));
            ByteBuffer b;
            synchronized (this) {
                b = free[c].poll();
                if (b != null) {
                    kept -= b.capacity();
                }
            }
            if (b == null) {
                try {
                    b = ByteBuffer.allocateDirect(MIN_CLASS << c);
                } catch (OutOfMemoryError directMemoryFull) {
                    b = ByteBuffer.allocate(MIN_CLASS << c);
                }
            }
            return b.clear().limit(length);
        }
        return ByteBuffer.allocate(length);
    }

    /** Gives a buffer of {@link #take} back once nothing uses it any more. */
    void give(ByteBuffer b) {
        if (b == null || !b.isDirect() || b.capacity() > MAX_POOLED || Integer.bitCount(b.capacity()) != 1
                || b.capacity() < MIN_CLASS) {
            return;
        }
        synchronized (this) {
            if (kept + b.capacity() <= MAX_KEPT) {
                free[classOf(b.capacity())].push(b);
                kept += b.capacity();
            }
        }
    }

    /** Bytes kept for reuse now. */
    synchronized long kept() {
        return kept;
    }
}
