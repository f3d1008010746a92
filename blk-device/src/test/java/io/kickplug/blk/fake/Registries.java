package io.kickplug.blk.fake;

import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.blk.backend.FileBackendFactory;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.backend.NullBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import java.util.List;

/** A disk registry over the real virtio-transport components and the three backend factories. */
public final class Registries {

    private Registries() {
    }

    public static DiskRegistry real() {
        return new DiskRegistry(new TransportFactoryComponent(new VirtqueueFactoryComponent()), new IoThreadFactoryComponent(),
                new GuestMemoryFactoryComponent(),
                () -> List.of(new MemoryBackendFactory(), new NullBackendFactory(), new FileBackendFactory()));
    }
}
