package io.kickplug.api.memory;

import java.nio.ByteBuffer;
import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A guest's physical address space: one or more regions of off-heap memory, little-endian.
 *
 * <p>Addresses are unsigned 64-bit values held in a {@code long}. Every access is checked against the
 * regions; a failed check throws a {@link GuestMemoryException} subtype and touches nothing. The checks
 * cannot be switched off: guest memory is untrusted input (VIRTIO 1.2 section 2.7.5.1).
 *
 * <p>Accessor names state their memory ordering. {@code Acquire} loads are ordered before every later
 * load and store of the calling thread; {@code Release} stores are ordered after every earlier load and
 * store. Plain accessors give no ordering. Ordered accessors need naturally aligned addresses, as the
 * ring fields that use them are (section 2.7: rings are aligned).
 */
@ProviderType
public interface GuestMemory {

    /** The regions, ordered by guest address, non-overlapping. */
    List<MemoryRegion> regions();

    /** Sum of region sizes in bytes. */
    long totalSize();

    /**
     * Checks that {@code [address, address + length)} lies inside one or more contiguous regions.
     *
     * @throws AddressOverflowException if {@code address + length} passes 2^64
     * @throws InvalidGuestAddressException if {@code address} is in no region
     * @throws PartialBufferException if the range starts inside memory but does not end there
     */
    void checkRange(long address, long length);

    /** True when {@link #checkRange} would pass. Never throws. */
    boolean isValidRange(long address, long length);

    byte readU8(long address);

    void writeU8(long address, byte value);

    short readU16(long address);

    /** Load with acquire ordering (for a ring index published by the other side). */
    short readU16Acquire(long address);

    void writeU16(long address, short value);

    /** Store with release ordering (to publish a ring index after the entries it covers). */
    void writeU16Release(long address, short value);

    int readU32(long address);

    int readU32Acquire(long address);

    void writeU32(long address, int value);

    void writeU32Release(long address, int value);

    long readU64(long address);

    void writeU64(long address, long value);

    /** Copies {@code length} bytes from guest memory into {@code dst[offset..]}. */
    void read(long address, byte[] dst, int offset, int length);

    /** Copies {@code length} bytes from {@code src[offset..]} into guest memory. */
    void write(long address, byte[] src, int offset, int length);

    /** Copies guest memory into {@code dst} until it has no space left. */
    void read(long address, ByteBuffer dst);

    /** Copies all remaining bytes of {@code src} into guest memory. */
    void write(long address, ByteBuffer src);

    /** Sets {@code length} bytes to {@code value}. */
    void fill(long address, long length, byte value);

    /**
     * Views {@code [address, address + length)} as direct, little-endian byte buffers (one per region chunk
     * the range crosses), for zero-copy I/O. The views alias guest memory: the caller must not keep them
     * beyond the request that produced them.
     */
    ByteBuffer[] views(long address, long length);

    /**
     * Appends views of {@code [address, address + length)} to {@code into}, like {@link #views}, but reusing
     * {@code into}'s buffers so that a request path allocates nothing in steady state. The default delegates
     * to {@link #views} (and allocates); implementations backed by long-lived chunks override it with
     * {@link BufferViews#addRange}. Checked like every access.
     */
    default void viewsInto(long address, long length, BufferViews into) {
        for (ByteBuffer view : views(address, length)) {
            into.add(view);
        }
    }

    /** A full two-way fence: every earlier load and store is ordered before every later one. */
    void fullFence();

    /**
     * Takes a lease for a party that touches this memory from its own threads until it closes the lease. Memory
     * that can be released early (an in-process disk's shared-memory mapping) is unmapped the moment its last
     * lease closes, and every access after that throws {@link ReleasedMemoryException}; other memory returns
     * {@link MemoryLease#NONE} and is freed by the garbage collector as before.
     *
     * @throws ReleasedMemoryException when the memory was already released
     */
    default MemoryLease lease() {
        return MemoryLease.NONE;
    }
}
