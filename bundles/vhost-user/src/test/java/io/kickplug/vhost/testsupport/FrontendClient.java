package io.kickplug.vhost.testsupport;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.packed.PackedDriverQueue;
import io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent;
import io.kickplug.virtio.queue.SplitDriverQueue;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The protocol tests' front-end: {@link io.kickplug.vhost.frontend.FrontendClient} on the split and packed rings'
 * driver views (packed when VIRTIO_F_RING_PACKED was negotiated).
 */
public final class FrontendClient extends io.kickplug.vhost.frontend.FrontendClient {

    public FrontendClient(Path socketPath, Path memoryFile) throws IOException {
        this(socketPath, memoryFile, MEMORY_BYTES);
    }

    public FrontendClient(Path socketPath, Path memoryFile, long memoryBytes) throws IOException {
        super(socketPath, memoryFile, memoryBytes,
                RingSelector.of(new VirtqueueFactoryComponent(), new PackedVirtqueueFactoryComponent()),
                new GuestMemoryFactoryComponent());
    }

    /**
     * The driver views, which can resume at an available index (a restarted back-end): split at a 16-bit index,
     * packed at a position with its wrap counter in bit 15 (both sides of the fresh ring start there).
     */
    @Override
    protected DriverQueue newDriverQueue(GuestMemory memory, QueueLayout layout, long features, int base) {
        if (RingFormat.of(features) == RingFormat.PACKED) {
            PackedDriverQueue driver = new PackedDriverQueue(memory, layout, features, -1, 0);
            if ((base & 0xffff) != RingFormat.PACKED.initialIndex()) {
                driver.resumeAt(base & 0xffff);
            }
            return driver;
        }
        SplitDriverQueue driver = new SplitDriverQueue(memory, layout, features, -1, 0);
        if (base != 0) {
            driver.resumeAt(base);
        }
        return driver;
    }
}
