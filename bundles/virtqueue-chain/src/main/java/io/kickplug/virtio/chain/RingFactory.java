package io.kickplug.virtio.chain;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtqueueFactory;

/**
 * A ring format's {@link VirtqueueFactory}, given the constructors of its driver and device views: a device view
 * starts at the indices asked for. The split and the packed bundle each register one as their component.
 */
public abstract class RingFactory implements VirtqueueFactory {

    /** The constructor of a ring format's driver view. */
    @FunctionalInterface
    protected interface DriverViews {
        DriverQueue create(GuestMemory memory, QueueLayout layout, long features, long indirectArea, int maxIndirect);
    }

    /** The constructor of a ring format's device view (which validates the layout). */
    @FunctionalInterface
    protected interface DeviceViews {
        QueueBase create(GuestMemory memory, int index, QueueLayout layout, long features);
    }

    private final DriverViews driverViews;
    private final DeviceViews deviceViews;

    protected RingFactory(DriverViews driverViews, DeviceViews deviceViews) {
        this.driverViews = driverViews;
        this.deviceViews = deviceViews;
    }

    @Override
    public final DriverQueue createDriverQueue(GuestMemory memory, QueueLayout layout, long features,
            long indirectArea, int maxIndirect) {
        return driverViews.create(memory, layout, features, indirectArea, maxIndirect);
    }

    @Override
    public final DeviceQueue createDeviceQueue(GuestMemory memory, int index, QueueLayout layout, long features,
            int nextAvail, int nextUsed) {
        QueueBase q = deviceViews.create(memory, index, layout, features);
        q.setIndices(nextAvail, nextUsed);
        return q;
    }
}
