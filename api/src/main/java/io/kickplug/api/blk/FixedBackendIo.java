package io.kickplug.api.blk;

import java.nio.ByteBuffer;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A {@link BackendIo} whose operation, range and buffers are fixed when it is made; a subclass says only what its
 * {@link #complete} does. For callers that make one object per operation (a caller that waits, a request split in
 * parts, a test); the device reuses its own per slot instead.
 */
@ConsumerType
public abstract class FixedBackendIo implements BackendIo {

    private final Op op;
    private final long offset;
    private final long length;
    private final ByteBuffer[] buffers;
    private final boolean fua;
    private final boolean mayUnmap;

    protected FixedBackendIo(Op op, long offset, long length, ByteBuffer[] buffers, boolean fua, boolean mayUnmap) {
        this.op = op;
        this.offset = offset;
        this.length = length;
        this.buffers = buffers;
        this.fua = fua;
        this.mayUnmap = mayUnmap;
    }

    /** The remaining bytes of {@code buffers}: the length of a READ or WRITE of them. */
    public static long remaining(ByteBuffer[] buffers) {
        long n = 0;
        for (ByteBuffer b : buffers) {
            n += b.remaining();
        }
        return n;
    }

    @Override
    public Op op() {
        return op;
    }

    @Override
    public long offset() {
        return offset;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public ByteBuffer[] buffers() {
        return buffers;
    }

    @Override
    public boolean fua() {
        return fua;
    }

    @Override
    public boolean mayUnmap() {
        return mayUnmap;
    }
}
