package io.kickplug.vhost.testsupport;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.queue.SplitDriverQueue;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.io.IOException;
import java.nio.file.Path;

/** The protocol tests' front-end: {@link io.kickplug.vhost.frontend.FrontendClient} on the split ring's driver view. */
public final class FrontendClient extends io.kickplug.vhost.frontend.FrontendClient {

    public FrontendClient(Path socketPath, Path memoryFile) throws IOException {
        this(socketPath, memoryFile, MEMORY_BYTES);
    }

    public FrontendClient(Path socketPath, Path memoryFile, long memoryBytes) throws IOException {
        super(socketPath, memoryFile, memoryBytes, new VirtqueueFactoryComponent(), new GuestMemoryFactoryComponent());
    }

    /** The split driver view, which can resume at an available index (a restarted back-end). */
    @Override
    protected DriverQueue newDriverQueue(GuestMemory memory, QueueLayout layout, long features, int base) {
        SplitDriverQueue driver = new SplitDriverQueue(memory, layout, features, -1, 0);
        if (base != 0) {
            driver.resumeAt(base);
        }
        return driver;
    }
}
