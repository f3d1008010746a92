package io.kickplug.blk.backend;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A file channel that counts {@code force} calls and otherwise delegates. It also models a disk with a
 * volatile write cache: {@link #stable()} is the file's content as of the last {@code force}, what a power
 * loss would leave; writes since then exist only in the cache (the page cache).
 */
final class CountingChannel extends FileChannel {

    final AtomicInteger dataForces = new AtomicInteger();
    final AtomicInteger metadataForces = new AtomicInteger();
    private final FileChannel inner;
    private volatile byte[] stable = new byte[0];

    CountingChannel(FileChannel inner) {
        this.inner = inner;
    }

    @Override
    public void force(boolean metaData) throws IOException {
        inner.force(metaData);
        stable = snapshot();
        (metaData ? metadataForces : dataForces).incrementAndGet();
    }

    /** The file as of the last completed {@code force} (empty before the first). */
    byte[] stable() {
        return stable;
    }

    private byte[] snapshot() throws IOException {
        ByteBuffer all = ByteBuffer.allocate(Math.toIntExact(inner.size()));
        while (all.hasRemaining() && inner.read(all, all.position()) >= 0) {
            // positional reads until full
        }
        return all.array();
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return inner.read(dst);
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        return inner.read(dsts, offset, length);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return inner.write(src);
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return inner.write(srcs, offset, length);
    }

    @Override
    public long position() throws IOException {
        return inner.position();
    }

    @Override
    public FileChannel position(long newPosition) throws IOException {
        inner.position(newPosition);
        return this;
    }

    @Override
    public long size() throws IOException {
        return inner.size();
    }

    @Override
    public FileChannel truncate(long size) throws IOException {
        inner.truncate(size);
        return this;
    }

    @Override
    public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
        return inner.transferTo(position, count, target);
    }

    @Override
    public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
        return inner.transferFrom(src, position, count);
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        return inner.read(dst, position);
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
        return inner.write(src, position);
    }

    @Override
    public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
        return inner.map(mode, position, size);
    }

    @Override
    public FileLock lock(long position, long size, boolean shared) throws IOException {
        return inner.lock(position, size, shared);
    }

    @Override
    public FileLock tryLock(long position, long size, boolean shared) throws IOException {
        return inner.tryLock(position, size, shared);
    }

    @Override
    protected void implCloseChannel() throws IOException {
        inner.close();
    }
}
