package io.kickplug.blk.fake;

import io.kickplug.api.blk.BlockBackend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/** Wraps a backend, counts calls, and can be told to fail. */
public class RecordingBackend implements BlockBackend {

    public final AtomicInteger reads = new AtomicInteger();
    public final AtomicInteger writes = new AtomicInteger();
    public final AtomicInteger flushes = new AtomicInteger();
    public final AtomicInteger closes = new AtomicInteger();
    public final AtomicInteger discards = new AtomicInteger();
    public final AtomicInteger zeroings = new AtomicInteger();
    public final AtomicInteger resizes = new AtomicInteger();
    public volatile IOException failure;
    private final BlockBackend inner;

    public RecordingBackend(BlockBackend inner) {
        this.inner = inner;
    }

    @Override
    public String kind() {
        return inner.kind();
    }

    @Override
    public long size() {
        return inner.size();
    }

    @Override
    public boolean readOnly() {
        return inner.readOnly();
    }

    @Override
    public boolean blocking() {
        return inner.blocking();
    }

    @Override
    public void read(long offset, ByteBuffer[] dst) throws IOException {
        reads.incrementAndGet();
        failIfTold();
        inner.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer[] src) throws IOException {
        writes.incrementAndGet();
        failIfTold();
        inner.write(offset, src);
    }

    @Override
    public void flush() throws IOException {
        flushes.incrementAndGet();
        failIfTold();
        inner.flush();
    }

    @Override
    public boolean supportsDiscard() {
        return inner.supportsDiscard();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        discards.incrementAndGet();
        failIfTold();
        inner.discard(offset, length);
    }

    @Override
    public boolean supportsWriteZeroes() {
        return inner.supportsWriteZeroes();
    }

    @Override
    public void writeZeroes(long offset, long length, boolean mayUnmap) throws IOException {
        zeroings.incrementAndGet();
        failIfTold();
        inner.writeZeroes(offset, length, mayUnmap);
    }

    @Override
    public void resize(long newSize) throws IOException {
        resizes.incrementAndGet();
        failIfTold();
        inner.resize(newSize);
    }

    @Override
    public void close() throws IOException {
        closes.incrementAndGet();
        inner.close();
    }

    private void failIfTold() throws IOException {
        IOException e = failure;
        if (e != null) {
            throw e;
        }
    }
}
