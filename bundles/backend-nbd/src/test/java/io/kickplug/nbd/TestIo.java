package io.kickplug.nbd;

import io.kickplug.blk.testkit.RecordedIo;
import java.nio.ByteBuffer;

/** One backend operation made by a test, with its completion. */
final class TestIo extends RecordedIo {

    TestIo(Op op, long offset, long length, ByteBuffer[] buffers, boolean fua, boolean mayUnmap) {
        super(op, offset, length, buffers, fua, mayUnmap);
    }

    static TestIo read(long offset, int length) {
        return new TestIo(Op.READ, offset, length, new ByteBuffer[] {ByteBuffer.allocateDirect(length)}, false, false);
    }

    static TestIo write(long offset, byte[] data) {
        return new TestIo(Op.WRITE, offset, data.length, new ByteBuffer[] {ByteBuffer.wrap(data)}, false, false);
    }

    static TestIo flush() {
        return new TestIo(Op.FLUSH, 0, 0, new ByteBuffer[0], false, false);
    }

    byte[] data() {
        ByteBuffer b = buffers()[0].duplicate().clear();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}
