package io.kickplug.api.blk;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;

/** One operation submitted to an {@link AsyncBlockBackend} by a caller that waits for it (the synchronous methods). */
final class WaitingIo implements BackendIo {

    static final ByteBuffer[] NO_BUFFERS = new ByteBuffer[0];

    private final Op op;
    private final long offset;
    private final long length;
    private final ByteBuffer[] buffers;
    private final boolean mayUnmap;
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile IOException error;

    private WaitingIo(Op op, long offset, long length, ByteBuffer[] buffers, boolean mayUnmap) {
        this.op = op;
        this.offset = offset;
        this.length = length;
        this.buffers = buffers;
        this.mayUnmap = mayUnmap;
    }

    static void run(AsyncBlockBackend backend, Op op, long offset, ByteBuffer[] buffers, boolean mayUnmap)
            throws IOException {
        long length = 0;
        for (ByteBuffer b : buffers) {
            length += b.remaining();
        }
        wait(backend, new WaitingIo(op, offset, length, buffers, mayUnmap));
    }

    static void run(AsyncBlockBackend backend, Op op, long offset, long length, boolean mayUnmap) throws IOException {
        wait(backend, new WaitingIo(op, offset, length, NO_BUFFERS, mayUnmap));
    }

    private static void wait(AsyncBlockBackend backend, WaitingIo io) throws IOException {
        backend.submit(io);
        backend.unplug();
        try {
            io.done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for a " + io.op + " of the "
                    + backend.kind() + " backend");
        }
        if (io.error != null) {
            throw new IOException(io.error.getMessage(), io.error);
        }
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
        return false;
    }

    @Override
    public boolean mayUnmap() {
        return mayUnmap;
    }

    @Override
    public void complete(IOException error) {
        this.error = error;
        done.countDown();
    }
}
