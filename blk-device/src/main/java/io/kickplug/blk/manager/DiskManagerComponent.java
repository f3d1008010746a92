package io.kickplug.blk.manager;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.TransportFactory;
import io.kickplug.api.virtio.VirtioDevice;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/** The {@link DiskManager} service: a thin shell over {@link DiskRegistry}. */
@Component(service = DiskManager.class)
public final class DiskManagerComponent implements DiskManager {

    @Reference(name = "backendFactories", cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC)
    private volatile List<BackendFactory> backendFactories;

    private final DiskRegistry registry;

    @Activate
    public DiskManagerComponent(@Reference(name = "transportFactory") TransportFactory transports,
            @Reference(name = "ioThreadFactory") IoThreadFactory ioThreads,
            @Reference(name = "guestMemoryFactory") GuestMemoryFactory memory) {
        this.registry = new DiskRegistry(transports, ioThreads, memory, () -> backendFactories);
    }

    @Deactivate
    void deactivate() {
        registry.close();
    }

    @Override
    public DiskInfo attach(DiskSpec spec) {
        return registry.attach(spec);
    }

    @Override
    public void detach(String name) {
        registry.detach(name);
    }

    @Override
    public DiskInfo setTrackedLock(String name, TrackedLockKind kind) {
        return registry.setTrackedLock(name, kind);
    }

    @Override
    public DiskInfo resize(String name, long newSizeBytes) {
        return registry.resize(name, newSizeBytes);
    }

    @Override
    public List<DiskInfo> list() {
        return registry.list();
    }

    @Override
    public DiskInfo info(String name) {
        return registry.info(name);
    }

    @Override
    public VirtioDevice exportDevice(String name, int numQueues) {
        return registry.exportDevice(name, numQueues);
    }

    @Override
    public void releaseExport(String name, VirtioDevice device) {
        registry.releaseExport(name, device);
    }

    @Override
    public GuestPort port(String name) {
        return registry.port(name);
    }
}
