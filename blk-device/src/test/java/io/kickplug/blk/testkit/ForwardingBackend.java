package io.kickplug.blk.testkit;

import io.kickplug.api.blk.BlockBackend;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A backend that passes every call to another one: test backends (gated, counting, jittering) extend it and
 * override only the calls they change.
 */
public abstract class ForwardingBackend implements BlockBackend {

    protected final BlockBackend inner;
    /** The kind this backend reports, or null for the inner backend's. */
    private final String kind;
    /** Whether the device must run this backend's calls on workers, or null for the inner backend's answer. */
    private final Boolean blocking;

    protected ForwardingBackend(BlockBackend inner) {
        this(inner, null, null);
    }

    /** A backend that reports its own {@code kind} and {@code blocking} answer and forwards everything else. */
    protected ForwardingBackend(BlockBackend inner, String kind, Boolean blocking) {
        this.inner = inner;
        this.kind = kind;
        this.blocking = blocking;
    }

    /** The backend the calls go to (a test fills it or checks it directly). */
    public BlockBackend inner() {
        return inner;
    }

    @Override
    public String kind() {
        return kind != null ? kind : inner.kind();
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
        return blocking != null ? blocking : inner.blocking();
    }

    @Override
    public void read(long offset, ByteBuffer[] dst) throws IOException {
        inner.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer[] src) throws IOException {
        inner.write(offset, src);
    }

    @Override
    public void flush() throws IOException {
        inner.flush();
    }

    @Override
    public boolean supportsDiscard() {
        return inner.supportsDiscard();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        inner.discard(offset, length);
    }

    @Override
    public boolean supportsWriteZeroes() {
        return inner.supportsWriteZeroes();
    }

    @Override
    public void writeZeroes(long offset, long length, boolean mayUnmap) throws IOException {
        inner.writeZeroes(offset, length, mayUnmap);
    }

    @Override
    public void resize(long newSize) throws IOException {
        inner.resize(newSize);
    }

    @Override
    public void close() throws IOException {
        inner.close();
    }
}
