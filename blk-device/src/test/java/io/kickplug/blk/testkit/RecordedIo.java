package io.kickplug.blk.testkit;

import io.kickplug.api.blk.FixedBackendIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A backend operation a test submits to an asynchronous backend, recording its completion: how often it
 * completed, with which error, on which thread. Subclasses add factories or react to the completion (calling
 * {@code super.complete}).
 */
public class RecordedIo extends FixedBackendIo {

    public final AtomicInteger completions = new AtomicInteger();
    public final CountDownLatch done = new CountDownLatch(1);
    public volatile IOException error;
    /** The name of the thread that completed it last. */
    public volatile String thread;

    public RecordedIo(Op op, long offset, long length, ByteBuffer[] buffers, boolean fua, boolean mayUnmap) {
        super(op, offset, length, buffers, fua, mayUnmap);
    }

    /** An operation on {@code buffers}, its length theirs, without FUA or unmapping. */
    public RecordedIo(Op op, long offset, ByteBuffer... buffers) {
        this(op, offset, remaining(buffers), buffers, false, false);
    }

    @Override
    public void complete(IOException e) {
        error = e;
        thread = Thread.currentThread().getName();
        completions.incrementAndGet();
        done.countDown();
    }

    /** Waits for the (first) completion; false after {@code seconds}. */
    public boolean await(long seconds) throws InterruptedException {
        return done.await(seconds, TimeUnit.SECONDS);
    }
}
