package io.kickplug.virtio.queue;

import io.kickplug.api.virtio.ChainWriter;
import java.nio.ByteBuffer;

/**
 * Writes only the chain's device-writable buffers (section 2.7.5.1: never a device-readable one). A pooled
 * writer (its chain's own) keeps one pooled cursor for its first {@link #splitAt} per chain (a virtio-blk
 * request's status byte); further splits make fresh cursors.
 */
final class SplitChainWriter implements ChainWriter {
    private final Segments s;
    private final boolean pooled;
    private SplitChainWriter spare;
    private boolean spareTaken;

    SplitChainWriter(Segments s, boolean pooled) {
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
    public void skip(long length) {
        s.skip(length, true);
    }

    @Override
    public ByteBuffer[] views(long length) {
        return s.views(length, true);
    }

    @Override
    public ChainWriter splitAt(long offset) {
        if (pooled && !spareTaken) {
            if (spare == null) {
                spare = new SplitChainWriter(new Segments(s.memory), true);
            }
            s.splitAt(offset, true, spare.s);
            spareTaken = true;
            spare.recycle();
            return spare;
        }
        return new SplitChainWriter(s.splitAt(offset, true, new Segments(s.memory)), false);
    }
}
