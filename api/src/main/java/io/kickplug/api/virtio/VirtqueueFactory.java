package io.kickplug.api.virtio;

import io.kickplug.api.memory.GuestMemory;
import org.osgi.annotation.versioning.ProviderType;

/** Service that creates driver views of split virtqueues (device views are created by transports). */
@ProviderType
public interface VirtqueueFactory {

    /**
     * Creates a driver view over rings at {@code layout}, initialising them (zeroed rings, free list).
     *
     * @param features the negotiated features; EVENT_IDX and INDIRECT_DESC change the driver's behaviour
     * @param indirectArea guest address of an area of {@code layout.size() * maxIndirect * 16} bytes the
     *     driver may use for indirect tables, or -1 for none
     * @param maxIndirect the largest indirect table, in descriptors
     */
    DriverQueue createDriverQueue(GuestMemory memory, QueueLayout layout, long features, long indirectArea,
            int maxIndirect);
}
