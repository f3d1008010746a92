package io.kickplug.virtio.queue;

import io.kickplug.api.virtio.ChainWriter;
import java.nio.ByteBuffer;

/** Writes only the chain's device-writable buffers (section 2.7.5.1: never a device-readable one). */
final class SplitChainWriter implements ChainWriter {
    private final Segments s;

    SplitChainWriter(Segments s) {
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
    public void write(byte[] src, int offset, int length) {
        java.util.Objects.checkFromIndexSize(offset, length, src.length);
        s.write(src, offset, length);
    }

    @Override
    public void writeU8(int value) {
        s.write(new byte[] {(byte) value}, 0, 1);
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
        return new SplitChainWriter(s.splitAt(offset, true));
    }
}
