package io.kickplug.guest.memory;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.MemoryRegion;
import java.util.List;
import java.util.Objects;

/**
 * A bump allocator over guest memory, the simulated guest's only memory manager: rings, request headers,
 * data buffers and status bytes are carved from it once at boot and never freed (a reset of the device
 * makes all of it reusable by starting a new allocator).
 */
public final class GuestRam {
    /** A guest page: data buffers are page-aligned, a request segment never crosses one. */
    public static final int PAGE = 4096;


    private final GuestMemory memory;
    private final List<MemoryRegion> regions;
    private int region;
    private long next;
    private long allocated;

    public GuestRam(GuestMemory memory) {
        this.memory = Objects.requireNonNull(memory, "memory");
        this.regions = List.copyOf(memory.regions());
        if (regions.isEmpty()) {
            throw new IllegalArgumentException("guest memory has no regions");
        }
        this.next = regions.get(0).guestAddress();
    }

    public GuestMemory memory() {
        return memory;
    }

    /**
     * Allocates {@code bytes} bytes at an address aligned to {@code alignment} (a power of two), in the
     * first region with room left from the current position on.
     *
     * @throws IllegalStateException when guest memory is exhausted
     */
    public long allocate(long bytes, long alignment) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocation size must be positive: " + bytes);
        }
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two: " + alignment);
        }
        // Search with a local cursor: a failed allocation leaves the allocator as it was.
        for (int i = region; i < regions.size(); i++) {
            MemoryRegion r = regions.get(i);
            long start = Long.compareUnsigned(next, r.guestAddress()) > 0 ? next : r.guestAddress();
            long aligned = (start + alignment - 1) & -alignment;
            // Unsigned compares: a region may sit in the upper half of the address space.
            if (Long.compareUnsigned(aligned, start) >= 0
                    && Long.compareUnsigned(aligned, r.lastAddress()) <= 0
                    && Long.compareUnsigned(bytes - 1, r.lastAddress() - aligned) <= 0) {
                allocated += bytes;
                if (Long.compareUnsigned(aligned + bytes - 1, r.lastAddress()) == 0) {
                    region = i + 1;
                    next = i + 1 < regions.size() ? regions.get(i + 1).guestAddress() : 0;
                } else {
                    region = i;
                    next = aligned + bytes;
                }
                return aligned;
            }
        }
        throw new IllegalStateException("guest memory exhausted: cannot allocate " + bytes + " bytes after "
                + allocated + " of " + memory.totalSize() + " bytes were used");
    }

    /** Bytes handed out so far (padding excluded). */
    public long allocated() {
        return allocated;
    }
}
