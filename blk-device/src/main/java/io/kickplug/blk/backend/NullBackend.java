package io.kickplug.blk.backend;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.VirtioBlk;
import java.io.IOException;
import java.nio.ByteBuffer;

/** A disk with no storage (QEMU's null-co with read-zeroes): reads return zeroes, writes are dropped. */
public final class NullBackend implements BlockBackend {

    private final long size;
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
    public void close() {
        closed = true;
    }

    private void checkRange(long offset, ByteBuffer[] buffers) throws IOException {
        if (closed) {
            throw new IOException("the null disk is closed");
        }
        long length = 0;
        for (ByteBuffer buffer : buffers) {
            length += buffer.remaining();
        }
        if (offset < 0 || offset > size || length > size - offset) {
            throw new IOException(length + " bytes at offset " + offset + " lie outside the " + size
                    + "-byte null disk");
        }
    }
}
