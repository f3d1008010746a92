package io.kickplug.virtio.packed.ds;

import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.virtio.chain.RingFactory;
import io.kickplug.virtio.packed.PackedDeviceQueue;
import io.kickplug.virtio.packed.PackedDriverQueue;
import org.osgi.service.component.annotations.Component;

/** Driver and device views of packed virtqueues (VIRTIO 1.2 section 2.8), registered as {@code kickplug.ring=packed}. */
@Component(service = VirtqueueFactory.class, property = VirtqueueFactory.RING_PROPERTY + "=packed")
public final class PackedVirtqueueFactoryComponent extends RingFactory {

    public PackedVirtqueueFactoryComponent() {
        super(PackedDriverQueue::new, PackedDeviceQueue::new);
    }

    @Override
    public RingFormat format() {
        return RingFormat.PACKED;
    }

    @Override
    public String toString() {
        return "packed";
    }
}
