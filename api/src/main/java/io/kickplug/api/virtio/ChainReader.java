package io.kickplug.api.virtio;

import java.nio.ByteBuffer;
import org.osgi.annotation.versioning.ProviderType;

/** A byte cursor over the device-readable buffers of a chain, whatever their framing (section 2.7.4). */
@ProviderType
public interface ChainReader {

    /** Bytes left to read. */
    long remaining();

    /** Bytes read so far. */
    long position();

    /**
     * Reads exactly {@code length} bytes.
     *
     * @throws java.nio.BufferUnderflowException if fewer remain (nothing is consumed then)
     */
    void read(byte[] dst, int offset, int length);

    /** Reads a little-endian 32-bit value. */
    int readU32();

    /** Reads a little-endian 64-bit value. */
    long readU64();

    void skip(long length);

    /**
     * Consumes {@code length} bytes and returns them as views into guest memory, for zero-copy I/O.
     *
     * @throws java.nio.BufferUnderflowException if fewer remain
     */
    ByteBuffer[] views(long length);

    /**
     * Splits off the bytes from {@code offset} (relative to the current position) to the end into a new
     * reader, and limits this one to the first {@code offset} bytes.
     */
    ChainReader splitAt(long offset);
}
