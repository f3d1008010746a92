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
        dataCall(reads);
        super.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer[] src) throws IOException {
        dataCall(writes);
        super.write(offset, src);
    }

    @Override
    public void flush() throws IOException {
        call(flushes);
        super.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        call(discards);
        super.discard(offset, length);
    }

    @Override
    public void writeZeroes(long offset, long length, boolean mayUnmap) throws IOException {
        call(zeroings);
        super.writeZeroes(offset, length, mayUnmap);
    }

    @Override
    public void resize(long newSize) throws IOException {
        call(resizes);
        super.resize(newSize);
    }

    @Override
    public void close() throws IOException {
        closes.incrementAndGet();
        super.close();
    }

    /** A read or write: counted, its thread noted, failed if told. */
    private void dataCall(AtomicInteger counter) throws IOException {
        threads.add(Thread.currentThread().getName());
        call(counter);
    }

    /** Counts a call, then throws the {@link #failure} if one is set. */
    private void call(AtomicInteger counter) throws IOException {
        counter.incrementAndGet();
        IOException e = failure;
        if (e != null) {
            throw e;
        }
    }
}
