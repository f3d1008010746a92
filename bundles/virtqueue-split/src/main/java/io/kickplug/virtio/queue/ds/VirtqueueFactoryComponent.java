package io.kickplug.virtio.queue.ds;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.virtio.queue.SplitDeviceQueue;
import io.kickplug.virtio.queue.SplitDriverQueue;
import org.osgi.service.component.annotations.Component;

/** Driver views of split virtqueues for simulated guests, device views for out-of-bundle transports. */
@Component(service = VirtqueueFactory.class, property = VirtqueueFactory.RING_PROPERTY + "=split")
public final class VirtqueueFactoryComponent implements VirtqueueFactory {

    @Override
    public DriverQueue createDriverQueue(GuestMemory memory, QueueLayout layout, long features, long indirectArea,
            int maxIndirect) {
        return new SplitDriverQueue(memory, layout, features, indirectArea, maxIndirect);
    }

    @Override
    public DeviceQueue createDeviceQueue(GuestMemory memory, int index, QueueLayout layout, long features,
            int nextAvail, int nextUsed) {
        SplitDeviceQueue q = new SplitDeviceQueue(memory, index, layout, features);
        q.setIndices(nextAvail, nextUsed);
        return q;
    }
}
