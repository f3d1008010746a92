package io.kickplug.api.virtio;

import java.nio.ByteBuffer;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A byte cursor over the device-writable buffers of a chain. It never writes a device-readable buffer
 * (section 2.7.5.1).
 */
@ProviderType
public interface ChainWriter {

    /** Bytes of writable space left. */
    long remaining();

    /** Bytes written (or skipped) so far. */
    long position();

    /**
     * Writes exactly {@code length} bytes.
     *
     * @throws java.nio.BufferOverflowException if less space remains (nothing is written then)
     */
    void write(byte[] src, int offset, int length);

    void writeU8(int value);

    /** Writes {@code length} zero bytes. */
    void writeZeroes(long length);

    void skip(long length);

    /** Consumes {@code length} bytes of space and returns it as views into guest memory. */
    ByteBuffer[] views(long length);

    /**
     * Splits off the space from {@code offset} (relative to the current position) to the end into a new
     * writer, and limits this one to the first {@code offset} bytes.
     */
    ChainWriter splitAt(long offset);
}
