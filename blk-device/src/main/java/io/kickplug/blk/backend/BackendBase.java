package io.kickplug.blk.backend;

import io.kickplug.api.blk.BlockBackend;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What the product's backends share: kind, size (changed by {@code resize}), the read-only flag, the range and
 * write checks every request passes first, and DISCARD served as WRITE_ZEROES (Java 17 cannot punch holes, and a
 * memory disk frees or zeroes alike).
 */
abstract class BackendBase implements BlockBackend {

    private final String kind;
    protected final boolean readOnly;
    /** Bytes; written only by {@code resize}. */
    protected volatile long size;

    protected BackendBase(String kind, long size, boolean readOnly) {
        this.kind = kind;
        this.size = size;
        this.readOnly = readOnly;
    }

    /** What messages call this disk, e.g. "the memory disk" or "image file '/x'". */
    protected abstract String describe();

    /** Throws when the backend is closed; the range check calls it first. */
    protected void checkOpen() throws IOException {
    }

    @Override
    public final String kind() {
        return kind;
    }

    @Override
    public final long size() {
        return size;
    }

    @Override
    public final boolean readOnly() {
        return readOnly;
    }

    @Override
    public boolean supportsDiscard() {
        return true;
    }

    /** Same as {@link #writeZeroes}: later reads return zeroes. */
    @Override
    public void discard(long offset, long length) throws IOException {
        writeZeroes(offset, length, true);
    }

    @Override
    public boolean supportsWriteZeroes() {
        return true;
    }

    protected final void checkWritable() throws IOException {
        if (readOnly) {
            throw new IOException(describe() + " is read-only");
        }
    }

    /** Refuses a range that does not lie within the disk as it is now (a request raced with a shrink). */
    protected final void checkRange(long offset, long length) throws IOException {
        checkOpen();
        long current = size;
        if (offset < 0 || length < 0 || offset > current || length > current - offset) {
            throw new IOException(length + " bytes at offset " + offset + " lie outside " + describe() + " of "
                    + current + " bytes");
        }
    }

    /** The bytes {@code buffers} hold from their positions to their limits. */
    protected static long length(ByteBuffer[] buffers) {
        long length = 0;
        for (ByteBuffer buffer : buffers) {
            length += buffer.remaining();
        }
        return length;
    }
}
