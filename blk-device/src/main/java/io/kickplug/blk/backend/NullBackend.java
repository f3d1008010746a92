package io.kickplug.blk.backend;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.VirtioBlk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;

/**
 * A disk with no storage, QEMU's null-co: writes are dropped; discard and write-zeroes are no-ops; resize only
 * changes the size. Its two options are null-co's:
 * <ul>
 * <li>{@code read-zeroes} (off by default, as in QEMU): reads fill the guest's buffers with zeroes (bulk
 * copies); off, a read leaves them as they are and moves no data, which is what a benchmark of the request
 * path wants;</li>
 * <li>{@code latency-ns} (0 by default): every request completes that long after it started, so a null disk can
 * behave like a device with a service time. With a latency the backend is {@link #blocking()}: its calls wait
 * on the disk's worker pool, so at most {@code workers} requests are in their delay at once.</li>
 * </ul>
 */
public final class NullBackend extends BackendBase {

    /** Source of bulk zero fills; only ever read, with absolute gets, so sharing it is safe. */
    private static final ByteBuffer ZEROES = ByteBuffer.allocateDirect(64 * 1024).asReadOnlyBuffer();

    private final boolean readZeroes;
    private final long latencyNs;
    private volatile boolean closed;

    /**
     * A null disk that reads zeroes, without latency (the behaviour before the options existed).
     *
     * @param size bytes, a positive multiple of 512
     */
    public NullBackend(long size, boolean readOnly) {
        this(size, readOnly, true, 0);
    }

    /**
     * @param size bytes, a positive multiple of 512
     * @param readZeroes reads fill the buffers with zeroes (QEMU's {@code read-zeroes})
     * @param latencyNs the completion delay of every request, 0 to {@link BackendSpec#MAX_LATENCY_NS}
     *     (QEMU's {@code latency-ns})
     */
    public NullBackend(long size, boolean readOnly, boolean readZeroes, long latencyNs) {
        super("null", size, readOnly);
        if (size <= 0 || size % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IllegalArgumentException("null disk size " + size + " is not a positive multiple of 512");
        }
        if (latencyNs < 0 || latencyNs > BackendSpec.MAX_LATENCY_NS) {
            throw new IllegalArgumentException("null disk latency-ns " + latencyNs + " is out of range 0.."
                    + BackendSpec.MAX_LATENCY_NS);
        }
        this.readZeroes = readZeroes;
        this.latencyNs = latencyNs;
    }

    /** True only with a latency: the delay then waits on a worker, never on the I/O thread. */
    @Override
    public boolean blocking() {
        return latencyNs > 0;
    }

    public boolean readZeroes() {
        return readZeroes;
    }

    public long latencyNs() {
        return latencyNs;
    }

    @Override
    public void read(long offset, ByteBuffer[] dst) throws IOException {
        long start = latencyNs > 0 ? System.nanoTime() : 0;
        checkRange(offset, length(dst));
        for (ByteBuffer buffer : dst) {
            if (readZeroes) {
                zeroFill(buffer);
            } else {
                buffer.position(buffer.limit()); // consumed, untouched: QEMU null-co without read-zeroes
            }
        }
        delay(start);
    }

    /** Bulk copies from a shared zero buffer (absolute puts: no allocation, no shared position). */
    private static void zeroFill(ByteBuffer buffer) {
        int at = buffer.position();
        int left = buffer.remaining();
        while (left > 0) {
            int n = Math.min(left, ZEROES.capacity());
            buffer.put(at, ZEROES, 0, n);
            at += n;
            left -= n;
        }
        buffer.position(at);
    }

    /** Waits until {@code latencyNs} after {@code start}; parks, so the worker's CPU is free meanwhile. */
    private void delay(long start) {
        if (latencyNs <= 0) {
            return;
        }
        long deadline = start + latencyNs;
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            LockSupport.parkNanos(this, left); // may return early (spurious wake-up): loop on the deadline
        }
    }

    @Override
    public void write(long offset, ByteBuffer[] src) throws IOException {
        long start = latencyNs > 0 ? System.nanoTime() : 0;
        if (readOnly) {
            throw new IOException("the null disk is read-only");
        }
        checkRange(offset, length(src));
        for (ByteBuffer buffer : src) {
            buffer.position(buffer.limit());
        }
        delay(start);
    }

    @Override
    public void flush() throws IOException {
        long start = latencyNs > 0 ? System.nanoTime() : 0;
        if (closed) {
            throw new IOException("the null disk is closed");
        }
        delay(start);
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        long start = latencyNs > 0 ? System.nanoTime() : 0;
        checkWritable(offset, length);
        delay(start);
    }

    @Override
    public void writeZeroes(long offset, long length, boolean mayUnmap) throws IOException {
        long start = latencyNs > 0 ? System.nanoTime() : 0;
        checkWritable(offset, length);
        delay(start);
    }

    @Override
    public void resize(long newSize) throws IOException {
        if (newSize <= 0 || newSize % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IOException("null disk size " + newSize + " is not a positive multiple of 512");
        }
        if (closed) {
            throw new IOException("the null disk is closed");
        }
        size = newSize;
    }

    @Override
    public void close() {
        closed = true;
    }

    @Override
    protected String describe() {
        return "the null disk";
    }

    @Override
    protected void checkOpen() throws IOException {
        if (closed) {
            throw new IOException("the null disk is closed");
        }
    }

    private void checkWritable(long offset, long length) throws IOException {
        checkWritable();
        checkRange(offset, length);
    }
}
