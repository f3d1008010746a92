package io.kickplug.api.blk;

import java.io.IOException;
import java.util.function.LongConsumer;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * An asynchronous backend that answers the synchronous questions (kind, size, read-only, discard and
 * write-zeroes support) and resizes through another backend; a subclass says how operations run
 * ({@link #submit}) and what {@link #close} releases. For adapters and wrappers that keep the disk another backend
 * describes: a synchronous backend put behind the asynchronous contract, or a filter in front of a disk.
 */
@ConsumerType
public abstract class DelegatingAsyncBackend implements AsyncBlockBackend {

    /** What answers the questions. */
    protected final BlockBackend backend;

    protected DelegatingAsyncBackend(BlockBackend backend) {
        this.backend = backend;
    }

    @Override
    public String kind() {
        return backend.kind();
    }

    @Override
    public long size() {
        return backend.size();
    }

    @Override
    public boolean readOnly() {
        return backend.readOnly();
    }

    @Override
    public boolean supportsDiscard() {
        return backend.supportsDiscard();
    }

    @Override
    public boolean supportsWriteZeroes() {
        return backend.supportsWriteZeroes();
    }

    @Override
    public void resize(long newSize) throws IOException {
        backend.resize(newSize);
    }

    @Override
    public void watchSize(LongConsumer listener) {
        backend.watchSize(listener);
    }

    /** The backend this one serves. */
    public BlockBackend backend() {
        return backend;
    }
}
