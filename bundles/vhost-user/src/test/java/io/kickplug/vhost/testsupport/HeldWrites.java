package io.kickplug.vhost.testsupport;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.blk.testkit.ForwardingBackend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A backend whose writes wait while {@link #hold} is set, until {@link #release}, so a request can be held in the
 * back-end; {@link #awaitHeld} waits until a number of writes are held.
 */
public final class HeldWrites extends ForwardingBackend {

    public final AtomicBoolean hold = new AtomicBoolean();
    /** One permit per write that arrived while held. */
    private final Semaphore held = new Semaphore(0);
    public final CountDownLatch release = new CountDownLatch(1);
    private final boolean closeInner;

    /**
     * @param blocking whether the device runs the writes on its worker pool (true) or on the queue's I/O thread,
     *     which then hangs in the held write and takes nothing more from the ring (false: a back-end that is gone)
     * @param closeInner whether {@link #close} closes the inner backend too (false leaves the disk open)
     */
    public HeldWrites(BlockBackend inner, boolean blocking, boolean closeInner) {
        super(inner, "held-writes", blocking);
        this.closeInner = closeInner;
    }

    /** Whether {@code n} writes arrived while held within {@code seconds}. */
    public boolean awaitHeld(int n, long seconds) throws InterruptedException {
        return held.tryAcquire(n, seconds, TimeUnit.SECONDS);
    }

    @Override
    public void write(long offset, ByteBuffer[] src) throws IOException {
        if (hold.get()) {
            held.release();
            try {
                if (!release.await(60, TimeUnit.SECONDS)) {
                    throw new IOException("held write never released");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
        super.write(offset, src);
    }

    /** Releases the held writes; closes the inner backend only if asked to. */
    @Override
    public void close() throws IOException {
        release.countDown();
        if (closeInner) {
            super.close();
        }
    }
}
