package io.kickplug.blk.backend;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.VirtioBlk;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A disk in off-heap memory: direct buffers of at most 1 GiB each, so a disk may exceed 2 GiB. Starts
 * zeroed. Safe for concurrent calls on disjoint ranges: the chunks' own positions are never touched.
 */
public final class MemoryBackend implements BlockBackend {

    static final int DEFAULT_CHUNK = 1 << 30;

    private final long size;
    private final boolean readOnly;
    private final int chunkSize;
    private volatile ByteBuffer[] chunks;

    /**
     * @param size bytes, a positive multiple of 512
     */
    public MemoryBackend(long size, boolean readOnly) {
        this(size, readOnly, DEFAULT_CHUNK);
    }

    /** With a chosen chunk size, so tests can cross chunk boundaries cheaply. */
    MemoryBackend(long size, boolean readOnly, int chunkSize) {
        if (size <= 0 || size % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IllegalArgumentException("memory disk size " + size + " is not a positive multiple of 512");
        }
        if (chunkSize <= 0) {
            throw new IllegalArgumentException("chunk size " + chunkSize + " must be positive");
        }
        long count = (size + chunkSize - 1) / chunkSize;
        if (count > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("memory disk size " + size + " is too large");
        }
        ByteBuffer[] allocated = new ByteBuffer[(int) count];
        for (int i = 0; i < allocated.length; i++) {
            long left = size - (long) i * chunkSize;
            allocated[i] = ByteBuffer.allocateDirect((int) Math.min(chunkSize, left));
        }
        this.size = size;
        this.readOnly = readOnly;
        this.chunkSize = chunkSize;
        this.chunks = allocated;
    }

    @Override
    public String kind() {
        return "memory";
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public boolean readOnly() {
        return readOnly;
    }

    @Override
    public boolean blocking() {
        return false;
    }

    @Override
    public void read(long offset, ByteBuffer[] dst) throws IOException {
        ByteBuffer[] all = open();
        checkRange(offset, dst);
        long position = offset;
        for (ByteBuffer buffer : dst) {
            while (buffer.hasRemaining()) {
                ByteBuffer chunk = all[(int) (position / chunkSize)];
                int within = (int) (position % chunkSize);
                int n = Math.min(buffer.remaining(), chunk.capacity() - within);
                buffer.put(chunk.slice(within, n));
                position += n;
            }
        }
    }

    @Override
    public void write(long offset, ByteBuffer[] src) throws IOException {
        if (readOnly) {
            throw new IOException("the memory disk is read-only");
        }
        ByteBuffer[] all = open();
        checkRange(offset, src);
        long position = offset;
        for (ByteBuffer buffer : src) {
            while (buffer.hasRemaining()) {
                ByteBuffer chunk = all[(int) (position / chunkSize)];
                int within = (int) (position % chunkSize);
                int n = Math.min(buffer.remaining(), chunk.capacity() - within);
                chunk.slice(within, n).put(buffer.slice(buffer.position(), n));
                buffer.position(buffer.position() + n);
                position += n;
            }
        }
    }

    @Override
    public void flush() throws IOException {
        open();
    }

    /** Drops the memory; later calls fail. Idempotent. */
    @Override
    public void close() {
        chunks = null;
    }

    private ByteBuffer[] open() throws IOException {
        ByteBuffer[] all = chunks;
        if (all == null) {
            throw new IOException("the memory disk is closed");
        }
        return all;
    }

    private void checkRange(long offset, ByteBuffer[] buffers) throws IOException {
        long length = 0;
        for (ByteBuffer buffer : buffers) {
            length += buffer.remaining();
        }
        if (offset < 0 || offset > size || length > size - offset) {
            throw new IOException(length + " bytes at offset " + offset + " lie outside the " + size
                    + "-byte memory disk");
        }
    }
}
