package io.kickplug.blk.backend;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A backend whose storage a resize or a close replaces: what the file and the memory backend share. Every READ,
 * WRITE and WRITE_ZEROES holds the read side of {@link #resizeLock} from its range check to its last byte, so no
 * request runs against a size or storage that a resize (or close) is changing, and requests on disjoint ranges
 * still run concurrently; {@code resize} and {@code close} take the write side. A write is refused on a
 * read-only disk before the lock is taken.
 */
abstract class ResizeLockedBackend extends BackendBase {

    /** Read side: one I/O call; write side: a resize or the close. */
    protected final ReadWriteLock resizeLock = new ReentrantReadWriteLock();

    protected ResizeLockedBackend(String kind, long size, boolean readOnly) {
        super(kind, size, readOnly);
    }

    @Override
    public final void read(long offset, ByteBuffer[] dst) throws IOException {
        transferLocked(offset, dst, false);
    }

    @Override
    public final void write(long offset, ByteBuffer[] src) throws IOException {
        checkWritable();
        transferLocked(offset, src, true);
    }

    private void transferLocked(long offset, ByteBuffer[] buffers, boolean write) throws IOException {
        resizeLock.readLock().lock();
        try {
            long length = length(buffers);
            checkRange(offset, length);
            transfer(offset, length, buffers, write);
        } finally {
            resizeLock.readLock().unlock();
        }
    }

    @Override
    public final void writeZeroes(long offset, long length, boolean mayUnmap) throws IOException {
        checkWritable();
        resizeLock.readLock().lock();
        try {
            checkRange(offset, length);
            zero(offset, length);
        } finally {
            resizeLock.readLock().unlock();
        }
    }

    /**
     * Moves the {@code length} bytes of {@code buffers} (their remaining bytes) to the disk from {@code offset} on
     * ({@code write}) or from it into them; called under the read lock, after the range check.
     */
    protected abstract void transfer(long offset, long length, ByteBuffer[] buffers, boolean write)
            throws IOException;

    /**
     * Makes {@code [offset, offset + length)} read as zeroes (WRITE_ZEROES, and DISCARD through it: the unmap
     * permission changes nothing here); called under the read lock, after the range check.
     */
    protected abstract void zero(long offset, long length) throws IOException;
}
