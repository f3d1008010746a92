package io.kickplug.nbd;

import io.kickplug.api.blk.BackendIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** One backend operation made by a test, with its completion. */
final class TestIo implements BackendIo {

    final Op op;
    final long offset;
    final long length;
    final ByteBuffer[] buffers;
    final boolean fua;
    final boolean mayUnmap;
    final AtomicInteger completions = new AtomicInteger();
    final CountDownLatch done = new CountDownLatch(1);
    volatile IOException error;

    TestIo(Op op, long offset, long length, ByteBuffer[] buffers, boolean fua, boolean mayUnmap) {
        this.op = op;
        this.offset = offset;
        this.length = length;
        this.buffers = buffers;
        this.fua = fua;
        this.mayUnmap = mayUnmap;
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

    @Override
    public Op op() {
        return op;
    }

    @Override
    public long offset() {
        return offset;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public ByteBuffer[] buffers() {
        return buffers;
    }

    @Override
    public boolean fua() {
        return fua;
    }

    @Override
    public boolean mayUnmap() {
        return mayUnmap;
    }

    @Override
    public void complete(IOException e) {
        error = e;
        completions.incrementAndGet();
        done.countDown();
    }

    /** Waits for the completion; false after {@code seconds}. */
    boolean await(long seconds) throws InterruptedException {
        return done.await(seconds, TimeUnit.SECONDS);
    }

    byte[] data() {
        ByteBuffer b = buffers[0].duplicate().clear();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}
