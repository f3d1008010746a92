package io.kickplug.blk.manager;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollPolicy;
import io.kickplug.api.poll.PollStatus;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.TransportFactory;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * The {@link DiskManager} service: a thin shell over {@link DiskRegistry}. The {@code adaptive}
 * {@link PollPolicy} is bound dynamically: when its bundle stops, disks that poll go back to notifications
 * at a safe point; when it returns, they poll again.
 */
@Component(service = DiskManager.class)
public final class DiskManagerComponent implements DiskManager {

    @Reference(name = "backendFactories", cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC)
    private volatile List<BackendFactory> backendFactories;

    private final DiskRegistry registry;
    /** The poll policy the registry uses; guarded by this. */
    private PollPolicy pollPolicy;

    @Activate
    public DiskManagerComponent(@Reference(name = "transportFactory") TransportFactory transports,
            @Reference(name = "ioThreadFactory") IoThreadFactory ioThreads,
            @Reference(name = "guestMemoryFactory") GuestMemoryFactory memory) {
        this.registry = new DiskRegistry(transports, ioThreads, memory, () -> backendFactories);
    }

    @Reference(name = "pollPolicy", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY, unbind = "unbindPollPolicy",
            target = "(" + PollPolicy.PROPERTY + "=" + PollPolicy.ADAPTIVE + ")")
    synchronized void bindPollPolicy(PollPolicy policy) {
        pollPolicy = policy;
        registry.setPollPolicy(policy);
    }

    synchronized void unbindPollPolicy(PollPolicy policy) {
        // A greedy replacement binds the new policy before unbinding the old one.
        if (pollPolicy == policy) {
            pollPolicy = null;
            registry.setPollPolicy(null);
        }
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
    public PollStatus setPolling(String name, boolean enabled, PollParams params) {
        return registry.setPolling(name, enabled, params);
    }

    @Override
    public PollStatus pollStatus(String name) {
        return registry.pollStatus(name);
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
    public GuestPort port(String name) {
        return registry.port(name);
    }
}
