package io.kickplug.blk.fake;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.blk.testkit.ForwardingBackend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A blocking backend (so the device uses its worker pool) over another backend: an operation whose sector
 * has a closed gate waits until the test opens it. Records "begin/end op@sector thread" events in order.
 */
public final class GatedBackend extends ForwardingBackend {

    /** The gate key of FLUSH. */
    public static final long FLUSH = -1;

    private final Map<Long, CountDownLatch> gates = new ConcurrentHashMap<>();
    public final List<String> events = new CopyOnWriteArrayList<>();
    /** Names of the threads that called the backend. */
    public final List<String> threads = new CopyOnWriteArrayList<>();
    private final Semaphore entered = new Semaphore(0);

    public GatedBackend(BlockBackend inner) {
        super(inner, "gated", true);
    }

    /** Makes the next operations at {@code sector} (or {@link #FLUSH}) wait until {@link #open}. */
    public void close(long sector) {
        gates.put(sector, new CountDownLatch(1));
    }

    public void open(long sector) {
        CountDownLatch gate = gates.remove(sector);
        if (gate != null) {
            gate.countDown();
        }
    }

    /** Waits until {@code n} more operations have entered the backend. */
    public void awaitEntered(int n) throws InterruptedException {
        if (!entered.tryAcquire(n, 10, TimeUnit.SECONDS)) {
            throw new AssertionError(n + " operations did not reach the backend in 10 s; events " + events);
        }
    }

    private void pass(String op, long sector, IoCall call) throws IOException {
        events.add("begin " + op + "@" + sector);
        threads.add(Thread.currentThread().getName());
        entered.release();
        CountDownLatch gate = gates.get(sector);
        if (gate != null) {
            try {
                if (!gate.await(30, TimeUnit.SECONDS)) {
                    throw new IOException("gate at " + sector + " never opened");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
        call.run();
        events.add("end " + op + "@" + sector);
    }

    private interface IoCall {
        void run() throws IOException;
    }

    @Override
    public void read(long offset, ByteBuffer[] dst) throws IOException {
        pass("read", offset / 512, () -> inner.read(offset, dst));
    }

    @Override
    public void write(long offset, ByteBuffer[] src) throws IOException {
        pass("write", offset / 512, () -> inner.write(offset, src));
    }

    @Override
    public void flush() throws IOException {
        pass("flush", FLUSH, inner::flush);
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        pass("discard", offset / 512, () -> inner.discard(offset, length));
    }

    @Override
    public void writeZeroes(long offset, long length, boolean mayUnmap) throws IOException {
        pass("zeroes", offset / 512, () -> inner.writeZeroes(offset, length, mayUnmap));
    }

    @Override
    public void close() throws IOException {
        gates.values().forEach(CountDownLatch::countDown);
        super.close();
    }
}
