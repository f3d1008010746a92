package io.kickplug.api.virtio;

import io.kickplug.api.memory.GuestMemory;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Service that creates views of split virtqueues: driver views for simulated guests, device views for
 * transports that live in other bundles (vhost-user).
 */
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

    /**
     * Creates a device view over rings the driver laid out, validating size, alignment and placement
     * (VIRTIO 1.2 section 2.7).
     *
     * @param nextAvail the available index to start from (vhost-user SET_VRING_BASE; 0 after a reset)
     * @param nextUsed the used index to start from (normally equal to nextAvail)
     * @throws GuestFaultException for a layout the spec forbids
     */
    DeviceQueue createDeviceQueue(GuestMemory memory, int index, QueueLayout layout, long features, int nextAvail,
            int nextUsed);
}
