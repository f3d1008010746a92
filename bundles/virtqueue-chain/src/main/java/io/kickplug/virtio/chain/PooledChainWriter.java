package io.kickplug.virtio.chain;

import io.kickplug.api.virtio.ChainWriter;

/**
 * Writes only the chain's device-writable buffers (section 2.7.5.1: never a device-readable one). A pooled
 * writer (its chain's own) keeps one pooled cursor for its first {@link #splitAt} per chain (a virtio-blk
 * request's status byte); further splits make fresh cursors.
 */
final class PooledChainWriter extends PooledCursor<PooledChainWriter> implements ChainWriter {

    PooledChainWriter(Segments s, boolean pooled) {
        super(s, pooled, true);
    }

    @Override
    PooledChainWriter create(Segments segments, boolean pooled) {
        return new PooledChainWriter(segments, pooled);
    }

    @Override
    public void write(byte[] src, int offset, int length) {
        java.util.Objects.checkFromIndexSize(offset, length, src.length);
        s.write(src, offset, length);
    }

    @Override
    public void writeU8(int value) {
        s.writeU8(value);
    }

    @Override
    public void writeZeroes(long length) {
        s.fill(length, (byte) 0);
    }

    @Override
    public ChainWriter splitAt(long offset) {
        return split(offset);
    }
}
