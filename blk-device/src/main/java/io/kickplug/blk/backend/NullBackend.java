package io.kickplug.blk.backend;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.VirtioBlk;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A disk with no storage (QEMU's null-co with read-zeroes): reads return zeroes, writes are dropped.
 * Discard and write-zeroes are no-ops (reads return zeroes anyway); resize only changes the size.
 */
public final class NullBackend implements BlockBackend {

    private volatile long size;
    private final boolean readOnly;
    private volatile boolean closed;

    /**
     * @param size bytes, a positive multiple of 512
     */
    public NullBackend(long size, boolean readOnly) {
        if (size <= 0 || size % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IllegalArgumentException("null disk size " + size + " is not a positive multiple of 512");
        }
        this.size = size;
        this.readOnly = readOnly;
    }

    @Override
    public String kind() {
        return "null";
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
        checkRange(offset, dst);
        for (ByteBuffer buffer : dst) {
            while (buffer.hasRemaining()) {
                buffer.put((byte) 0);
            }
        }
    }

    @Override
    public void write(long offset, ByteBuffer[] src) throws IOException {
        if (readOnly) {
            throw new IOException("the null disk is read-only");
        }
        checkRange(offset, src);
        for (ByteBuffer buffer : src) {
            buffer.position(buffer.limit());
        }
    }

    @Override
    public void flush() throws IOException {
        if (closed) {
            throw new IOException("the null disk is closed");
        }
    }

    @Override
    public boolean supportsDiscard() {
        return true;
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        checkWritable(offset, length);
    }

    @Override
    public boolean supportsWriteZeroes() {
        return true;
    }

    @Override
    public void writeZeroes(long offset, long length, boolean mayUnmap) throws IOException {
        checkWritable(offset, length);
    }

    @Override
    public void resize(long newSize) throws IOException {
        if (newSize <= 0 || newSize % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IOException("null disk size " + newSize + " is not a positive multiple of 512");
        }
        if (closed) {
            throw new IOException("the null disk is closed");
        }
        size = newSize;
    }

    @Override
    public void close() {
        closed = true;
    }

    private void checkWritable(long offset, long length) throws IOException {
        if (readOnly) {
            throw new IOException("the null disk is read-only");
        }
        checkRange(offset, length);
    }

    private void checkRange(long offset, ByteBuffer[] buffers) throws IOException {
        long length = 0;
        for (ByteBuffer buffer : buffers) {
            length += buffer.remaining();
        }
        checkRange(offset, length);
    }

    private void checkRange(long offset, long length) throws IOException {
        if (closed) {
            throw new IOException("the null disk is closed");
        }
        long current = size;
        if (offset < 0 || length < 0 || offset > current || length > current - offset) {
            throw new IOException(length + " bytes at offset " + offset + " lie outside the " + current
                    + "-byte null disk");
        }
    }
}
