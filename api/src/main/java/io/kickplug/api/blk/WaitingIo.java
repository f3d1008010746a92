package io.kickplug.api.blk;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;

/** One operation submitted to an {@link AsyncBlockBackend} by a caller that waits for it (the synchronous methods). */
final class WaitingIo extends FixedBackendIo {

    static final ByteBuffer[] NO_BUFFERS = new ByteBuffer[0];

    private final CountDownLatch done = new CountDownLatch(1);
    private volatile IOException error;

    private WaitingIo(Op op, long offset, long length, ByteBuffer[] buffers, boolean mayUnmap) {
        super(op, offset, length, buffers, false, mayUnmap);
    }

    static void run(AsyncBlockBackend backend, Op op, long offset, ByteBuffer[] buffers, boolean mayUnmap)
            throws IOException {
        wait(backend, new WaitingIo(op, offset, remaining(buffers), buffers, mayUnmap));
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
            throw new InterruptedIOException("interrupted while waiting for a " + io.op() + " of the "
                    + backend.kind() + " backend");
        }
        if (io.error != null) {
            throw new IOException(io.error.getMessage(), io.error);
        }
    }

    @Override
    public void complete(IOException error) {
        this.error = error;
        done.countDown();
    }
}
