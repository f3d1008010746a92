package io.kickplug.blk.backend;

import io.kickplug.api.blk.VirtioBlk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A sparse disk in off-heap memory. The disk is cut into chunks (1 MiB by default) that are allocated as
 * direct buffers on their first write; an unallocated chunk reads as zeroes, and a discard or write-zeroes
 * that covers a whole chunk frees it. A 1 TiB disk therefore costs only its chunk table (about 4 MiB of
 * heap) until it is written.
 *
 * <p>Thread-safety: calls on disjoint ranges may run concurrently (a chunk's first allocation is a
 * compare-and-set; the chunks' own positions are never touched). Overlapping calls are ordered by the
 * device, not here. {@link #resize} excludes all I/O with a read-write lock, so no write lands in a chunk
 * table that a resize is replacing.
 */
public final class MemoryBackend extends ResizeLockedBackend {

    static final int DEFAULT_CHUNK = 1 << 20;
    private static final byte[] ZEROES = new byte[8192];

    private final int chunkSize;
    private final AtomicLong allocated = new AtomicLong();
    private volatile AtomicReferenceArray<ByteBuffer> chunks;

    /**
     * @param size bytes, a positive multiple of 512
     */
    public MemoryBackend(long size, boolean readOnly) {
        this(size, readOnly, DEFAULT_CHUNK);
    }

    /** With a chosen chunk size, so tests can cross chunk boundaries cheaply. */
    MemoryBackend(long size, boolean readOnly, int chunkSize) {
        super("memory", size, readOnly);
        if (chunkSize <= 0) {
            throw new IllegalArgumentException("chunk size " + chunkSize + " must be positive");
        }
        this.chunkSize = chunkSize;
        this.chunks = new AtomicReferenceArray<>(chunkCount(size, chunkSize));
    }

    private static int chunkCount(long size, int chunkSize) {
        if (size <= 0 || size % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IllegalArgumentException("memory disk size " + size + " is not a positive multiple of 512");
        }
        long count = (size + chunkSize - 1) / chunkSize;
        if (count > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("memory disk size " + size + " is too large");
        }
        return (int) count;
    }

    @Override
    public boolean blocking() {
        return false;
    }

    @Override
    protected String describe() {
        return "the memory disk";
    }

    /** A closed memory disk refuses every call before its range is looked at. */
    @Override
    protected void checkOpen() throws IOException {
        open();
    }

    /** Bytes of chunks allocated now. */
    public long allocatedBytes() {
        return allocated.get();
    }

    /**
     * Copies between the chunks from {@code offset} on and {@code buffers}: into the chunks for a write (allocating
     * them), out of them for a read (an unallocated chunk reads as zeroes).
     */
    @Override
    protected void transfer(long offset, long length, ByteBuffer[] buffers, boolean write) throws IOException {
        AtomicReferenceArray<ByteBuffer> all = open();
        long position = offset;
        for (ByteBuffer buffer : buffers) {
            while (buffer.hasRemaining()) {
                int index = (int) (position / chunkSize);
                int within = (int) (position % chunkSize);
                int n = Math.min(buffer.remaining(), chunkSize - within);
                if (write) {
                    chunk(all, index).slice(within, n).put(buffer.slice(buffer.position(), n));
                    buffer.position(buffer.position() + n);
                } else {
                    readChunk(all.get(index), within, n, buffer);
                }
                position += n;
            }
        }
    }

    @Override
    public void flush() throws IOException {
        open();
    }

    /** Frees the chunks the range covers wholly and zeroes the rest of it. */
    @Override
    protected void zero(long offset, long length) throws IOException {
        AtomicReferenceArray<ByteBuffer> all = open();
        long position = offset;
        long end = offset + length;
        while (position < end) {
            int index = (int) (position / chunkSize);
            int within = (int) (position % chunkSize);
            int n = (int) Math.min(end - position, chunkSize - within);
            if (within == 0 && (n == chunkSize || position + n == size)) {
                free(all, index);
            } else {
                ByteBuffer chunk = all.get(index);
                if (chunk != null) {
                    zero(chunk, within, n);
                }
            }
            position += n;
        }
    }

    /**
     * Changes the size. Growing adds unallocated (zero) chunks; shrinking frees the chunks past the end and
     * zeroes the cut-off part of the last one, so a later growth reads zeroes there.
     */
    @Override
    public void resize(long newSize) throws IOException {
        checkWritable();
        int newCount;
        try {
            newCount = chunkCount(newSize, chunkSize);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage());
        }
        resizeLock.writeLock().lock();
        try {
            AtomicReferenceArray<ByteBuffer> old = open();
            AtomicReferenceArray<ByteBuffer> next = new AtomicReferenceArray<>(newCount);
            for (int i = 0; i < Math.min(newCount, old.length()); i++) {
                next.set(i, old.get(i));
            }
            for (int i = newCount; i < old.length(); i++) {
                free(old, i);
            }
            if (newSize < size) {
                int within = (int) (newSize % chunkSize);
                ByteBuffer last = within == 0 ? null : next.get(newCount - 1);
                if (last != null) {
                    zero(last, within, chunkSize - within);
                }
            }
            chunks = next;
            size = newSize;
        } finally {
            resizeLock.writeLock().unlock();
        }
    }

    /** Drops the memory; later calls fail. Idempotent. */
    @Override
    public void close() {
        resizeLock.writeLock().lock();
        try {
            chunks = null;
            allocated.set(0);
        } finally {
            resizeLock.writeLock().unlock();
        }
    }

    private ByteBuffer chunk(AtomicReferenceArray<ByteBuffer> all, int index) {
        ByteBuffer chunk = all.get(index);
        if (chunk != null) {
            return chunk;
        }
        ByteBuffer fresh = ByteBuffer.allocateDirect(chunkSize); // zeroed
        if (all.compareAndSet(index, null, fresh)) {
            allocated.addAndGet(chunkSize);
            return fresh;
        }
        return all.get(index); // another writer allocated it first
    }

    private void free(AtomicReferenceArray<ByteBuffer> all, int index) {
        if (all.getAndSet(index, null) != null) {
            allocated.addAndGet(-chunkSize);
        }
    }

    private static void zero(ByteBuffer chunk, int from, int length) {
        ByteBuffer target = chunk.slice(from, length);
        while (target.hasRemaining()) {
            fillZeroes(target, target.remaining());
        }
    }

    /** {@code n} bytes of {@code chunk} from {@code within} into {@code buffer}; zeroes for a chunk never written. */
    private static void readChunk(ByteBuffer chunk, int within, int n, ByteBuffer buffer) {
        if (chunk == null) {
            fillZeroes(buffer, n);
        } else {
            buffer.put(chunk.slice(within, n));
        }
    }

    /** Puts {@code n} zero bytes into {@code buffer}. */
    private static void fillZeroes(ByteBuffer buffer, int n) {
        while (n > 0) {
            int step = Math.min(n, ZEROES.length);
            buffer.put(ZEROES, 0, step);
            n -= step;
        }
    }

    private AtomicReferenceArray<ByteBuffer> open() throws IOException {
        AtomicReferenceArray<ByteBuffer> all = chunks;
        if (all == null) {
            throw new IOException("the memory disk is closed");
        }
        return all;
    }
}
