package io.kickplug.virtio.queue;

import io.kickplug.api.virtio.ChainReader;
import java.nio.ByteBuffer;

/**
 * Reads only the chain's device-readable buffers. A pooled reader (its chain's own) keeps one pooled cursor
 * for its first {@link #splitAt} per chain; further splits make fresh cursors.
 */
final class SplitChainReader implements ChainReader {
    private final Segments s;
    private final boolean pooled;
    private SplitChainReader spare;
    private boolean spareTaken;

    SplitChainReader(Segments s, boolean pooled) {
        this.s = s;
        this.pooled = pooled;
    }

    Segments segments() {
        return s;
    }

    /** The chain was reused: the spare cursor is free again. */
    void recycle() {
        spareTaken = false;
    }

    @Override
    public long remaining() {
        return s.remaining();
    }

    @Override
    public long position() {
        return s.position;
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
    public void skip(long length) {
        s.skip(length, false);
    }

    @Override
    public ByteBuffer[] views(long length) {
        return s.views(length, false);
    }

    @Override
    public ChainReader splitAt(long offset) {
        if (pooled && !spareTaken) {
            if (spare == null) {
                spare = new SplitChainReader(new Segments(s.memory), true);
            }
            s.splitAt(offset, false, spare.s);
            spareTaken = true;
            spare.recycle();
            return spare;
        }
        return new SplitChainReader(s.splitAt(offset, false, new Segments(s.memory)), false);
    }
}
