package io.kickplug.guest.engine;

import java.nio.ByteBuffer;

/**
 * Guest memory for I/O data, allocated by {@link Vcpu#allocate(int)} and owned by the job that allocated
 * it for the machine's life.
 */
public interface GuestBuffer {

    /** Guest physical address of the first byte. */
    long address();

    /** Size in bytes. */
    int size();

    /**
     * A fresh view of the whole buffer (position 0, limit {@link #size()}), little-endian, backed by guest
     * memory: fill it before a write, check it after a read completed.
     */
    ByteBuffer view();
}
