package io.kickplug.virtio.queue.ds;

import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.virtio.chain.RingFactory;
import io.kickplug.virtio.queue.SplitDeviceQueue;
import io.kickplug.virtio.queue.SplitDriverQueue;
import org.osgi.service.component.annotations.Component;

/** Driver views of split virtqueues for simulated guests, device views for out-of-bundle transports. */
@Component(service = VirtqueueFactory.class, property = VirtqueueFactory.RING_PROPERTY + "=split")
public final class VirtqueueFactoryComponent extends RingFactory {

    public VirtqueueFactoryComponent() {
        super(SplitDriverQueue::new, SplitDeviceQueue::new);
    }
}
