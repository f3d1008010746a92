package io.kickplug.api.virtio;

import io.kickplug.api.memory.GuestMemory;

/**
 * One {@link VirtqueueFactory} over a split and an optional packed one: each call goes to the factory of the
 * format its features select ({@link RingFormat#of}). What transports and guests hold when both ring bundles
 * may be present.
 */
public final class RingSelector implements VirtqueueFactory {
    private final VirtqueueFactory split;
    private final VirtqueueFactory packed;

    private RingSelector(VirtqueueFactory split, VirtqueueFactory packed) {
        this.split = split;
        this.packed = packed;
    }

    /**
     * A factory that uses {@code split} for split rings and {@code packed} (may be {@code null}: the packed
     * ring bundle is not there) for packed ones. Returns {@code split} itself when there is no packed factory.
     */
    public static VirtqueueFactory of(VirtqueueFactory split, VirtqueueFactory packed) {
        if (packed == null) {
            return split;
        }
        if (split.format() != RingFormat.SPLIT || packed.format() != RingFormat.PACKED) {
            throw new IllegalArgumentException("expected a split and a packed factory, got " + split.format()
                    + " and " + packed.format());
        }
        return new RingSelector(split, packed);
    }

    @Override
    public boolean supports(RingFormat format) {
        return true;
    }

    private VirtqueueFactory pick(long features) {
        return RingFormat.of(features) == RingFormat.PACKED ? packed : split;
    }

    @Override
    public DriverQueue createDriverQueue(GuestMemory memory, QueueLayout layout, long features, long indirectArea,
            int maxIndirect) {
        return pick(features).createDriverQueue(memory, layout, features, indirectArea, maxIndirect);
    }

    @Override
    public DeviceQueue createDeviceQueue(GuestMemory memory, int index, QueueLayout layout, long features,
            int nextAvail, int nextUsed) {
        return pick(features).createDeviceQueue(memory, index, layout, features, nextAvail, nextUsed);
    }

    @Override
    public String toString() {
        return "RingSelector(" + split + ", " + packed + ")";
    }
}
