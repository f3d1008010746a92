package io.kickplug.virtio.chain;

import io.kickplug.api.virtio.ChainReader;

/**
 * Reads only the chain's device-readable buffers. A pooled reader (its chain's own) keeps one pooled cursor
 * for its first {@link #splitAt} per chain; further splits make fresh cursors.
 */
final class PooledChainReader extends PooledCursor<PooledChainReader> implements ChainReader {

    PooledChainReader(Segments s, boolean pooled) {
        super(s, pooled, false);
    }

    @Override
    PooledChainReader create(Segments segments, boolean pooled) {
        return new PooledChainReader(segments, pooled);
    }

    @Override
    public void read(byte[] dst, int offset, int length) {
        java.util.Objects.checkFromIndexSize(offset, length, dst.length);
        s.read(dst, offset, length);
    }

    @Override
    public int readU32() {
        return s.readU32();
    }

    @Override
    public long readU64() {
        return s.readU64();
    }

    @Override
    public ChainReader splitAt(long offset) {
        return split(offset);
    }
}
