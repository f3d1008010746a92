package io.kickplug.blk.fake;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.blk.testkit.ForwardingBackend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** Wraps a backend, counts calls, and can be told to fail. */
public class RecordingBackend extends ForwardingBackend {

    public final AtomicInteger reads = new AtomicInteger();
    public final AtomicInteger writes = new AtomicInteger();
    public final AtomicInteger flushes = new AtomicInteger();
    public final AtomicInteger closes = new AtomicInteger();
    public final AtomicInteger discards = new AtomicInteger();
    public final AtomicInteger zeroings = new AtomicInteger();
    public final AtomicInteger resizes = new AtomicInteger();
    public volatile IOException failure;
    /** Names of the threads that read or wrote. */
    public final Set<String> threads = ConcurrentHashMap.newKeySet();

    public RecordingBackend(BlockBackend inner) {
        super(inner);
    }

    @Override
    public void read(long offset, ByteBuffer[] dst) throws IOException {
        reads.incrementAndGet();
        threads.add(Thread.currentThread().getName());
        failIfTold();
        super.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer[] src) throws IOException {
        writes.incrementAndGet();
        threads.add(Thread.currentThread().getName());
        failIfTold();
        super.write(offset, src);
    }

    @Override
    public void flush() throws IOException {
        flushes.incrementAndGet();
        failIfTold();
        super.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        discards.incrementAndGet();
        failIfTold();
        super.discard(offset, length);
    }

    @Override
    public void writeZeroes(long offset, long length, boolean mayUnmap) throws IOException {
        zeroings.incrementAndGet();
        failIfTold();
        super.writeZeroes(offset, length, mayUnmap);
    }

    @Override
    public void resize(long newSize) throws IOException {
        resizes.incrementAndGet();
        failIfTold();
        super.resize(newSize);
    }

    @Override
    public void close() throws IOException {
        closes.incrementAndGet();
        super.close();
    }

    private void failIfTold() throws IOException {
        IOException e = failure;
        if (e != null) {
            throw e;
        }
    }
}
