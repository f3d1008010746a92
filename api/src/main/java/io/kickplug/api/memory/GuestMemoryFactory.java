package io.kickplug.api.memory;

import java.nio.ByteBuffer;
import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/** Service that creates guest memories. */
@ProviderType
public interface GuestMemoryFactory {

    /** Allocates zeroed off-heap memory of {@code size} bytes as one region at guest address 0. */
    GuestMemory allocate(long size);

    /**
     * Allocates zeroed off-heap memory laid out as the given regions (a region over 2 GiB is backed by
     * several buffers).
     */
    GuestMemory allocate(List<MemoryRegion> layout);

    /**
     * Wraps existing direct buffers (for example memory mapped from a file descriptor) as regions.
     * {@code chunks.get(i)} backs {@code layout.get(i)}; each list entry is that region's buffers in order,
     * their capacities summing to the region's size.
     */
    GuestMemory wrap(List<MemoryRegion> layout, List<List<ByteBuffer>> chunks);
}
