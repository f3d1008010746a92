package io.kickplug.blk.manager;

import io.kickplug.api.memory.BufferViews;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.MemoryLease;
import io.kickplug.api.memory.MemoryRegion;
import io.kickplug.api.memory.ReleasedMemoryException;
import io.kickplug.api.memory.Unmapper;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An in-process disk's guest memory mapped from its shared-memory file ({@link SharedMemory#ramFile}), released
 * deterministically: every party that touches it from its own threads holds a {@link MemoryLease} (the disk
 * registry while the disk is attached, a simulated guest while its machine runs), and the mapping is unmapped
 * the moment the last lease closes, instead of whenever the garbage collector finds the buffers unreachable
 * (issue 18).
 *
 * <p>Why this is safe: a party closes its lease only after its own threads are out of the memory (the registry
 * after the device reset and the transport closed, which wait for the I/O threads and every request in flight,
 * VIRTIO 1.2 section 2.4; the guest after its vCPU threads ended). A late access through this object (a
 * reference kept by mistake) is refused with {@link ReleasedMemoryException}: {@code released} is set before the
 * buffers are unmapped, so an access that starts after the unmap sees it. Direct views handed out earlier
 * ({@link #views}) must not outlive their request, as {@link GuestMemory#views} says.
 */
public final class MappedGuestMemory implements GuestMemory {

    private static final Logger LOG = System.getLogger(MappedGuestMemory.class.getName());

    private final String name;
    private final GuestMemory memory;
    private final List<MappedByteBuffer> mappings;
    private final Object lock = new Object();
    /** Open leases; guarded by {@code lock}. */
    private int leases;
    /** Set (under {@code lock}) before the buffers are unmapped; read by every access. */
    private volatile boolean released;

    /**
     * @param name what the memory belongs to, for messages (the mapped file's name)
     * @param memory the accessors over {@code mappings}
     * @param mappings the buffers {@code FileChannel.map} returned (unmapped at the end)
     */
    public MappedGuestMemory(String name, GuestMemory memory, List<MappedByteBuffer> mappings) {
        this.name = name;
        this.memory = memory;
        this.mappings = List.copyOf(mappings);
    }

    @Override
    public MemoryLease lease() {
        synchronized (lock) {
            if (released) {
                throw released();
            }
            leases++;
        }
        AtomicBoolean closed = new AtomicBoolean();
        return () -> {
            if (closed.compareAndSet(false, true)) {
                drop();
            }
        };
    }

    /** Whether the memory has been unmapped (every lease closed). */
    public boolean isReleased() {
        return released;
    }

    private void drop() {
        synchronized (lock) {
            if (--leases > 0) {
                return;
            }
            released = true;
        }
        int unmapped = 0;
        for (MappedByteBuffer b : mappings) {
            if (Unmapper.unmap(b)) {
                unmapped++;
            }
        }
        int n = unmapped;
        LOG.log(Level.DEBUG, () -> "guest memory " + name + ": last lease closed, unmapped " + n + " of "
                + mappings.size() + " buffers");
    }

    private ReleasedMemoryException released() {
        return new ReleasedMemoryException("guest memory " + name + " was released (its disk was detached)");
    }

    private GuestMemory open() {
        if (released) {
            throw released();
        }
        return memory;
    }

    @Override
    public List<MemoryRegion> regions() {
        return memory.regions();
    }

    @Override
    public long totalSize() {
        return memory.totalSize();
    }

    @Override
    public void checkRange(long address, long length) {
        memory.checkRange(address, length);
    }

    @Override
    public boolean isValidRange(long address, long length) {
        return memory.isValidRange(address, length);
    }

    @Override
    public byte readU8(long address) {
        return open().readU8(address);
    }

    @Override
    public void writeU8(long address, byte value) {
        open().writeU8(address, value);
    }

    @Override
    public short readU16(long address) {
        return open().readU16(address);
    }

    @Override
    public short readU16Acquire(long address) {
        return open().readU16Acquire(address);
    }

    @Override
    public void writeU16(long address, short value) {
        open().writeU16(address, value);
    }

    @Override
    public void writeU16Release(long address, short value) {
        open().writeU16Release(address, value);
    }

    @Override
    public int readU32(long address) {
        return open().readU32(address);
    }

    @Override
    public int readU32Acquire(long address) {
        return open().readU32Acquire(address);
    }

    @Override
    public void writeU32(long address, int value) {
        open().writeU32(address, value);
    }

    @Override
    public void writeU32Release(long address, int value) {
        open().writeU32Release(address, value);
    }

    @Override
    public long readU64(long address) {
        return open().readU64(address);
    }

    @Override
    public void writeU64(long address, long value) {
        open().writeU64(address, value);
    }

    @Override
    public void read(long address, byte[] dst, int offset, int length) {
        open().read(address, dst, offset, length);
    }

    @Override
    public void write(long address, byte[] src, int offset, int length) {
        open().write(address, src, offset, length);
    }

    @Override
    public void read(long address, ByteBuffer dst) {
        open().read(address, dst);
    }

    @Override
    public void write(long address, ByteBuffer src) {
        open().write(address, src);
    }

    @Override
    public void fill(long address, long length, byte value) {
        open().fill(address, length, value);
    }

    @Override
    public ByteBuffer[] views(long address, long length) {
        return open().views(address, length);
    }

    /** The wrapped memory's reusing views (the interface's default would allocate a view array per call). */
    @Override
    public void viewsInto(long address, long length, BufferViews into) {
        open().viewsInto(address, length, into);
    }

    @Override
    public void fullFence() {
        memory.fullFence();
    }

    @Override
    public String toString() {
        return "MappedGuestMemory[" + name + (released ? ", released" : ", " + leases + " leases") + "]";
    }
}
