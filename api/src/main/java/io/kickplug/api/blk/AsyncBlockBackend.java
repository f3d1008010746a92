package io.kickplug.api.blk;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A backend that takes operations and completes them later ({@link BackendIo#complete}), from any thread; the
 * device delivers the completions back on the queue's I/O thread. This is how the device talks to every backend:
 * a synchronous {@link BlockBackend} is put behind an adapter (inline for a non-blocking one, a worker pool for a
 * blocking one), an asynchronous one (a network client) is used as it is.
 *
 * <p>{@link #submit} must not block on I/O: it runs on an I/O thread. A backend may hold submissions until
 * {@link #unplug()}, which the device calls after the last submission of a batch (the requests of one drain of a
 * queue), so a batch costs one hand-off to the backend's threads instead of one per request.
 *
 * <p>The synchronous methods inherited from {@link BlockBackend} are implemented by submitting and waiting; the
 * device never calls them on an asynchronous backend.
 */
@ConsumerType
public interface AsyncBlockBackend extends BlockBackend {

    /**
     * Starts {@code io}; its {@link BackendIo#complete} is called exactly once, maybe before this returns. A
     * failure is reported through {@code complete}, never thrown.
     */
    void submit(BackendIo io);

    /** The caller's batch of submissions ends: start what was held back. Callable from any thread. */
    default void unplug() {
    }

    /** Whether {@link BackendIo#fua()} writes are supported (otherwise the device follows a write with a flush). */
    default boolean supportsFua() {
        return false;
    }

    /** Never: {@link #submit} does not block. */
    @Override
    default boolean blocking() {
        return false;
    }

    @Override
    default void read(long offset, ByteBuffer[] dst) throws IOException {
        WaitingIo.run(this, BackendIo.Op.READ, offset, dst, false);
    }

    @Override
    default void write(long offset, ByteBuffer[] src) throws IOException {
        WaitingIo.run(this, BackendIo.Op.WRITE, offset, src, false);
    }

    @Override
    default void flush() throws IOException {
        WaitingIo.run(this, BackendIo.Op.FLUSH, 0, WaitingIo.NO_BUFFERS, false);
    }

    @Override
    default void discard(long offset, long length) throws IOException {
        WaitingIo.run(this, BackendIo.Op.DISCARD, offset, length, false);
    }

    @Override
    default void writeZeroes(long offset, long length, boolean mayUnmap) throws IOException {
        WaitingIo.run(this, BackendIo.Op.WRITE_ZEROES, offset, length, mayUnmap);
    }
}
