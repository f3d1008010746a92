package io.kickplug.api.virtio;

import io.kickplug.api.memory.GuestMemory;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Service that creates views of virtqueues: driver views for simulated guests, device views for transports.
 * Each ring format is a bundle of its own that registers this service with the property {@link #RING_PROPERTY}
 * ({@code split} or {@code packed}); {@link RingSelector} combines them into one factory that picks the format
 * the negotiated features select ({@link RingFormat#of}).
 */
@ProviderType
public interface VirtqueueFactory {

    /** Service property naming the ring format a registered factory serves: {@code split} or {@code packed}. */
    String RING_PROPERTY = "kickplug.ring";

    /** The ring format this factory creates (a {@link RingSelector} answers for its split one). */
    default RingFormat format() {
        return RingFormat.SPLIT;
    }

    /** Whether this factory creates rings of {@code format}. */
    default boolean supports(RingFormat format) {
        return format == format();
    }

    /**
     * Creates a driver view over rings at {@code layout}, initialising them (zeroed rings, free list).
     *
     * @param features the negotiated features; EVENT_IDX and INDIRECT_DESC change the driver's behaviour,
     *     RING_PACKED selects the packed format
     * @param indirectArea guest address of an area of {@code layout.size() * maxIndirect * 16} bytes the
     *     driver may use for indirect tables, or -1 for none
     * @param maxIndirect the largest indirect table, in descriptors
     */
    DriverQueue createDriverQueue(GuestMemory memory, QueueLayout layout, long features, long indirectArea,
            int maxIndirect);

    /**
     * Creates a device view over rings the driver laid out, validating size, alignment and placement
     * (VIRTIO 1.2 section 2.7, or 2.8 when {@code features} hold RING_PACKED).
     *
     * @param nextAvail the available index to start from (vhost-user SET_VRING_BASE; 0 after a reset); for a
     *     packed ring the ring position in bits 0-14 and the wrap counter in bit 15, as vhost-user carries it
     *     ({@link RingFormat#initialIndex()} after a reset)
     * @param nextUsed the used index to start from (normally equal to nextAvail), encoded the same way
     * @throws GuestFaultException for a layout the spec forbids
     */
    DeviceQueue createDeviceQueue(GuestMemory memory, int index, QueueLayout layout, long features, int nextAvail,
            int nextUsed);
}
