package io.kickplug.blk.manager;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.guest.LockStatRow;
import io.kickplug.api.guest.LockStatSource;
import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollPolicy;
import io.kickplug.api.poll.PollStatus;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.TransportFactory;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.blk.notify.NotifierRegistry;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * The {@link DiskManager} service, the disks' {@link NotificationControl} and the tracked-requests locks as a
 * {@link LockStatSource}: a thin shell over {@link DiskRegistry}. Every {@link CompletionNotifier} service is
 * bound dynamically (greedy, so a returning or better-ranked strategy is picked up at once) into the
 * {@link NotifierRegistry} the disks' queues resolve their strategy names in. The {@code adaptive}
 * {@link PollPolicy} is bound dynamically too: when its bundle stops, disks that poll go back to
 * notifications at a safe point; when it returns, they poll again.
 *
 * <p><b>Disks outlive this component.</b> {@link #attach} also creates the disk's ConfigAdmin factory
 * configuration and {@link #detach} deletes it; memory disks keep their bytes, and disks their guest memory,
 * in named shared-memory files ({@link SharedMemory}). When this component goes (its bundle, or the transport
 * or virtqueue bundle it needs, is stopped or updated) every disk quiesces ({@link DiskRegistry#close}) and
 * its files stay; when it comes back each disk's {@link DiskConfigComponent} attaches it again from its
 * configuration over the same files, and a guest that saw the device go finds it again. The files are
 * deleted when the framework itself stops.
 */
@Component(service = {DiskManager.class, NotificationControl.class, LockStatSource.class})
public final class DiskManagerComponent implements DiskManager, NotificationControl, LockStatSource, DiskRebuilder {

    private static final Logger LOG = System.getLogger(DiskManagerComponent.class.getName());

    /** Created before the references are bound (field initialisers run before DS binds anything). */
    private final NotifierRegistry notifiers = new NotifierRegistry();

    @Reference(name = "backendFactories", cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC)
    private volatile List<BackendFactory> backendFactories;

    private final DiskRegistry registry;
    private final BundleContext context;
    private final SharedMemory shared;

    @Reference(name = "configurationAdmin", cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC)
    private volatile ConfigurationAdmin configAdmin;
    /** The poll policy the registry uses; guarded by this. */
    private PollPolicy pollPolicy;

    @Activate
    public DiskManagerComponent(@Reference(name = "transportFactory") TransportFactory transports,
            @Reference(name = "ioThreadFactory") IoThreadFactory ioThreads,
            @Reference(name = "guestMemoryFactory") GuestMemoryFactory memory, BundleContext context) {
        this.registry = new DiskRegistry(transports, ioThreads, memory, () -> backendFactories, notifiers);
        this.context = context;
        this.shared = SharedMemory.system().orElse(null);
        if (shared != null) {
            registry.setSharedMemory(shared);
            try {
                int swept = shared.sweepDead();
                if (swept > 0) {
                    LOG.log(Level.INFO, "deleted " + swept + " shared-memory files of Kickplug processes that died");
                }
            } catch (IOException e) {
                LOG.log(Level.WARNING, "cannot look for stale shared-memory files in " + shared.dir() + ": " + e);
            }
        } else {
            LOG.log(Level.WARNING, "no /dev/shm: memory disks lose their contents when a Kickplug bundle is updated");
        }
    }

    @Reference(name = "completionNotifier", cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY,
            unbind = "removeNotifier")
    void addNotifier(CompletionNotifier notifier, Map<String, Object> properties) {
        notifiers.add(String.valueOf(properties.get(CompletionNotifier.PROPERTY)), notifier, ranking(properties),
                (Long) properties.get("service.id"));
    }

    /** Returns once no queue uses {@code notifier} any more (each switched at a safe point). */
    void removeNotifier(CompletionNotifier notifier) {
        notifiers.remove(notifier);
    }

    private static int ranking(Map<String, Object> properties) {
        return properties.get("service.ranking") instanceof Integer r ? r : 0;
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
        // Quiesce: every device resets and tells its guest it is gone; shared memory stays for the return.
        registry.close();
        if (shared != null && frameworkStopping()) {
            try {
                shared.deleteAll();
            } catch (IOException e) {
                LOG.log(Level.WARNING, "cannot delete the disks' shared-memory files: " + e);
            }
        }
    }

    private boolean frameworkStopping() {
        try {
            Bundle system = context.getBundle(0);
            return system == null || (system.getState() & (Bundle.STOPPING | Bundle.RESOLVED)) != 0;
        } catch (IllegalStateException e) {
            return true; // our context is no longer valid: the framework is going down
        }
    }

    /** Attaches the disk and records it as a configuration, so it outlives this bundle. */
    @Override
    public synchronized DiskInfo attach(DiskSpec spec) {
        if (spec != null && spec.name() != null && shared != null
                && registry.list().stream().noneMatch(d -> d.name().equals(spec.name()))) {
            try {
                shared.delete(spec.name()); // a new disk: nothing of an earlier one with that name
            } catch (IOException e) {
                throw new DiskException("cannot clear the shared memory of disk '" + spec.name() + "': "
                        + e.getMessage(), e);
            }
        }
        DiskInfo info = registry.attach(spec);
        ConfigurationAdmin admin = configAdmin;
        if (admin == null) {
            LOG.log(Level.WARNING, "disk " + spec.name() + ": no ConfigAdmin, the disk will not outlive its bundles");
            return info;
        }
        try {
            DiskConfigStore.save(admin, spec);
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "disk " + spec.name() + ": cannot save its configuration, it will not outlive "
                    + "its bundles: " + e);
        }
        return info;
    }

    /**
     * Detaches the disk and deletes its configuration (and its shared memory). A disk that is configured but
     * not attached now (being rebuilt, or its backend failed) just loses its configuration.
     */
    @Override
    public synchronized void detach(String name) {
        boolean attached = name != null && registry.list().stream().anyMatch(d -> d.name().equals(name));
        DiskException failure = null;
        if (attached) {
            try {
                registry.detach(name);
            } catch (DiskException e) {
                failure = e;
            }
        }
        boolean configured = false;
        ConfigurationAdmin admin = configAdmin;
        if (admin != null && name != null) {
            try {
                configured = DiskConfigStore.delete(admin, name);
            } catch (IOException e) {
                LOG.log(Level.WARNING, "disk " + name + ": cannot delete its configuration: " + e);
            }
        }
        if (failure != null) {
            throw failure;
        }
        if (!attached && !configured) {
            registry.detach(name); // the registry's "no disk named" error
        }
    }

    /** Refuses a disk whose configuration a concurrent {@link #detach} deleted (ConfigAdmin is asynchronous). */
    @Override
    public synchronized DiskInfo rebuild(DiskSpec spec) {
        ConfigurationAdmin admin = configAdmin;
        try {
            if (admin != null && !DiskConfigStore.names(admin).contains(spec.name())) {
                throw new DiskException("disk '" + spec.name() + "' was detached: its configuration is gone");
            }
        } catch (IOException e) {
            LOG.log(Level.WARNING, "cannot list the disk configurations: " + e);
        }
        return registry.attach(spec);
    }

    @Override
    public void release(String name) {
        if (registry.list().stream().anyMatch(d -> d.name().equals(name))) {
            registry.detach(name);
        }
    }

    @Override
    public List<String> configuredDisks() {
        List<String> names = new ArrayList<>(registry.list().stream().map(DiskInfo::name).toList());
        ConfigurationAdmin admin = configAdmin;
        if (admin != null) {
            try {
                for (String n : DiskConfigStore.names(admin)) {
                    if (!names.contains(n)) {
                        names.add(n);
                    }
                }
            } catch (IOException e) {
                LOG.log(Level.WARNING, "cannot list the disk configurations: " + e);
            }
        }
        return names;
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
    public VirtioDevice exportDevice(String name, int numQueues) {
        return registry.exportDevice(name, numQueues);
    }

    @Override
    public void releaseExport(String name, VirtioDevice device) {
        registry.releaseExport(name, device);
    }

    @Override
    public long ioThreadCpuNanos(String name) {
        return registry.ioThreadCpuNanos(name);
    }

    @Override
    public GuestPort port(String name) {
        return registry.port(name);
    }

    @Override
    public List<QueueCounters> setStrategy(String disk, String strategy, int queue) {
        return registry.setStrategy(disk, strategy, queue);
    }

    @Override
    public List<String> strategies() {
        return registry.strategies();
    }

    @Override
    public List<QueueCounters> counters(String disk) {
        return registry.counters(disk);
    }

    @Override
    public List<QueueCounters> exportCounters(String disk) {
        return registry.exportCounters(disk);
    }

    @Override
    public List<LockStatRow> lockStats() {
        return registry.lockStats();
    }

    @Override
    public void resetLockStats() {
        registry.resetLockStats();
    }
}
