package io.kickplug.blk.testkit;

import io.kickplug.blk.backend.FileBackendFactory;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.backend.NullBackendFactory;
import io.kickplug.api.blk.BackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.notify.NotifierRegistry;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;

/**
 * The host side in one process, without OSGi: a {@link DiskRegistry} (the {@code DiskManager},
 * {@code NotificationControl} and {@code LockStatSource} services) over the real split rings, transports, I/O
 * threads and guest memory, with the memory, null and file backends. Close it after the test.
 */
public final class InProcessHost {

    private InProcessHost() {
    }

    /** The memory, null and file backends. */
    public static List<BackendFactory> backends() {
        return List.of(new MemoryBackendFactory(), new NullBackendFactory(), new FileBackendFactory());
    }

    public static DiskRegistry registry() {
        return registry(InProcessHost::backends, new NotifierRegistry());
    }

    /** With the completion-notification strategies of {@code notifiers}. */
    public static DiskRegistry registry(NotifierRegistry notifiers) {
        return registry(InProcessHost::backends, notifiers);
    }

    /** With other backends. */
    public static DiskRegistry registry(Supplier<? extends Collection<BackendFactory>> backends) {
        return registry(backends, new NotifierRegistry());
    }

    public static DiskRegistry registry(Supplier<? extends Collection<BackendFactory>> backends,
            NotifierRegistry notifiers) {
        return new DiskRegistry(new TransportFactoryComponent(new VirtqueueFactoryComponent()),
                new IoThreadFactoryComponent(), new GuestMemoryFactoryComponent(), backends, notifiers);
    }
}
