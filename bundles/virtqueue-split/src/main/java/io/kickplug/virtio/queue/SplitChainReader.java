package io.kickplug.virtio.queue;

import io.kickplug.api.virtio.ChainReader;
import java.nio.ByteBuffer;

final class SplitChainReader implements ChainReader {
    private final Segments s;
    private final byte[] scratch = new byte[8];

    SplitChainReader(Segments s) {
        this.s = s;
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
        s.read(scratch, 0, 4);
        return (scratch[0] & 0xff) | (scratch[1] & 0xff) << 8 | (scratch[2] & 0xff) << 16 | (scratch[3] & 0xff) << 24;
    }

    @Override
    public long readU64() {
        s.read(scratch, 0, 8);
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | (scratch[i] & 0xff);
        }
        return v;
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
        return new SplitChainReader(s.splitAt(offset, false));
    }
}
