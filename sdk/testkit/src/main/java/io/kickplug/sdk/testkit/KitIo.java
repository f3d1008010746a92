package io.kickplug.sdk.testkit;

import io.kickplug.api.blk.FixedBackendIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One operation submitted straight to an {@link io.kickplug.api.blk.AsyncBlockBackend}, as the device submits it,
 * that records its completions: a second {@link #complete} is a broken {@link Rule#COMPLETED_EXACTLY_ONCE}.
 */
public final class KitIo extends FixedBackendIo {

    private final AtomicInteger completions = new AtomicInteger();
    private final CompletableFuture<IOException> done = new CompletableFuture<>();
    private volatile ContractViolation duplicate;

    private KitIo(Op op, long offset, long length, ByteBuffer[] buffers) {
        super(op, offset, length, buffers, false, false);
    }

    public static KitIo read(long offset, int length) {
        return new KitIo(Op.READ, offset, length, new ByteBuffer[] {ByteBuffer.allocateDirect(length)});
    }

    public static KitIo write(long offset, byte[] data) {
        return new KitIo(Op.WRITE, offset, data.length, new ByteBuffer[] {ByteBuffer.wrap(data)});
    }

    public static KitIo flush() {
        return new KitIo(Op.FLUSH, 0, 0, new ByteBuffer[0]);
    }

    public static KitIo writeZeroes(long offset, long length) {
        return new KitIo(Op.WRITE_ZEROES, offset, length, new ByteBuffer[0]);
    }

    public static KitIo discard(long offset, long length) {
        return new KitIo(Op.DISCARD, offset, length, new ByteBuffer[0]);
    }

    @Override
    public void complete(IOException error) {
        if (completions.incrementAndGet() > 1 && duplicate == null) {
            duplicate = new ContractViolation(Rule.COMPLETED_EXACTLY_ONCE, this + " completed "
                    + completions.get() + " times");
        }
        done.complete(error);
    }

    /** Whether it completed. */
    public boolean isDone() {
        return done.isDone();
    }

    /**
     * Waits for the completion (up to {@code seconds}) and returns its error, null on success.
     *
     * @throws ContractViolation when it never completes or completed twice
     */
    public IOException await(int seconds) {
        try {
            IOException error = done.get(seconds, TimeUnit.SECONDS);
            checkOnce();
            return error;
        } catch (TimeoutException e) {
            throw new ContractViolation(Rule.COMPLETED_EXACTLY_ONCE, this + " never completed (waited " + seconds
                    + " s)");
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Throws when it completed more than once so far. */
    public void checkOnce() {
        if (duplicate != null) {
            throw duplicate;
        }
    }

    /** READ: the bytes read. */
    public byte[] data() {
        ByteBuffer b = buffers()[0].duplicate().flip();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    @Override
    public String toString() {
        return op() + " " + length() + " bytes at " + offset();
    }
}
