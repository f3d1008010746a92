package io.kickplug.virtio.packed.ds;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.virtio.packed.PackedDeviceQueue;
import io.kickplug.virtio.packed.PackedDriverQueue;
import org.osgi.service.component.annotations.Component;

/** Driver and device views of packed virtqueues (VIRTIO 1.2 section 2.8), registered as {@code kickplug.ring=packed}. */
@Component(service = VirtqueueFactory.class, property = VirtqueueFactory.RING_PROPERTY + "=packed")
public final class PackedVirtqueueFactoryComponent implements VirtqueueFactory {

    @Override
    public RingFormat format() {
        return RingFormat.PACKED;
    }

    @Override
    public DriverQueue createDriverQueue(GuestMemory memory, QueueLayout layout, long features, long indirectArea,
            int maxIndirect) {
        return new PackedDriverQueue(memory, layout, features, indirectArea, maxIndirect);
    }

    @Override
    public DeviceQueue createDeviceQueue(GuestMemory memory, int index, QueueLayout layout, long features,
            int nextAvail, int nextUsed) {
        PackedDeviceQueue q = new PackedDeviceQueue(memory, index, layout, features);
        q.setIndices(nextAvail, nextUsed);
        return q;
    }

    @Override
    public String toString() {
        return "packed";
    }
}
