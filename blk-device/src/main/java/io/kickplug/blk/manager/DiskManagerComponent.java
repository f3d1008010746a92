package io.kickplug.blk.manager;

import io.kickplug.api.blk.BackendFactory;
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
import java.util.List;
import java.util.Map;
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
 */
@Component(service = {DiskManager.class, NotificationControl.class, LockStatSource.class})
public final class DiskManagerComponent implements DiskManager, NotificationControl, LockStatSource {

    /** Created before the references are bound (field initialisers run before DS binds anything). */
    private final NotifierRegistry notifiers = new NotifierRegistry();

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
        this.registry = new DiskRegistry(transports, ioThreads, memory, () -> backendFactories, notifiers);
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
