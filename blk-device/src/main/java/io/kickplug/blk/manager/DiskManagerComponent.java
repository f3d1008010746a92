package io.kickplug.blk.manager;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendFilter;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.api.lockstat.LockStatSource;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.poll.PollPolicy;
import io.kickplug.api.transport.TransportFactory;
import io.kickplug.blk.notify.NotifierRegistry;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
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
 * The {@link DiskRegistry} as the {@link DiskManager}, {@link NotificationControl} and {@link LockStatSource}
 * services: what it adds to the registry is the OSGi wiring and the disks' ConfigAdmin records. Every
 * {@link BackendFactory} and {@link CompletionNotifier} service is bound dynamically (notifiers greedy, so a
 * returning or better-ranked strategy is picked up at once) into the lists the disks resolve their backends and
 * strategy names in. The {@code adaptive} {@link PollPolicy} is bound dynamically too: when its bundle stops,
 * disks that poll go back to notifications at a safe point; when it returns, they poll again.
 *
 * <p><b>Disks outlive this component.</b> {@link #attach} also creates the disk's ConfigAdmin factory
 * configuration and {@link #detach} deletes it; memory disks keep their bytes, and disks their guest memory,
 * in named shared-memory files ({@link SharedMemory}). When this component goes (its bundle, or the transport
 * or virtqueue bundle it needs, is stopped or updated) every disk quiesces ({@link DiskRegistry#close}) and
 * its files stay; when it comes back each disk's {@link DiskConfigComponent} attaches it again from its
 * configuration over the same files, and a guest that saw the device go finds it again. The files are
 * deleted when the framework itself stops.
 *
 * <p><b>So do their settings.</b> Every live change of a disk's settings ({@code kp:notify}, {@code kp:poll},
 * {@code kp:tracked-lock}, {@code kp:ring}, {@code kp:resize}) is written into its configuration right after it is
 * made, by a thread of its own, and at the latest before this manager goes ({@link #settingsChanged}); a disk
 * rebuilt from its configuration gets them again before it is listed ({@link #rebuild}).
 */
@Component(service = {DiskManager.class, NotificationControl.class, LockStatSource.class})
public final class DiskManagerComponent extends DiskRegistry implements DiskRebuilder {

    private static final Logger LOG = System.getLogger(DiskManagerComponent.class.getName());

    private final List<BackendFactory> backendFactories;
    private final NotifierRegistry notifiers;
    private final BundleContext context;
    private final SharedMemory shared;

    @Reference(name = "configurationAdmin", cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC)
    private volatile ConfigurationAdmin configAdmin;
    /** The configured disks when this manager was deactivated (empty before). */
    private volatile List<String> configuredAtClose = List.of();
    /** The poll policy the registry uses; guarded by this. */
    private PollPolicy pollPolicy;

    @Activate
    public DiskManagerComponent(@Reference(name = "transportFactory") TransportFactory transports,
            @Reference(name = "ioThreadFactory") IoThreadFactory ioThreads,
            @Reference(name = "guestMemoryFactory") GuestMemoryFactory memory, BundleContext context) {
        this(transports, ioThreads, memory, context, new CopyOnWriteArrayList<>(), new NotifierRegistry());
    }

    /** The lists exist before DS binds anything into them. */
    private DiskManagerComponent(TransportFactory transports, IoThreadFactory ioThreads, GuestMemoryFactory memory,
            BundleContext context, List<BackendFactory> backendFactories, NotifierRegistry notifiers) {
        super(transports, ioThreads, memory, () -> backendFactories, notifiers);
        this.backendFactories = backendFactories;
        this.notifiers = notifiers;
        this.context = context;
        this.shared = SharedMemory.system().orElse(null);
        if (shared != null) {
            setSharedMemory(shared);
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

    @Reference(name = "backendFactories", cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, unbind = "removeBackendFactory")
    void addBackendFactory(BackendFactory factory) {
        backendFactories.add(factory);
        backendFactoryArrived(factory);
        retryWaiting(factory.kind());
    }

    /** Configurations waiting for a backend kind's factory: disk name to kind and retry. */
    private final Map<String, Map.Entry<String, Runnable>> waiting = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public boolean waitForBackend(DiskSpec spec, Runnable retry) {
        String kind = spec.backend().kind();
        if (hasFactory(kind)) {
            return false;
        }
        waiting.put(spec.name(), Map.entry(kind, retry));
        if (hasFactory(kind)) {
            retryWaiting(kind); // it arrived meanwhile
        }
        return true;
    }

    @Override
    public void cancelWait(String name) {
        waiting.remove(name);
    }

    private boolean hasFactory(String kind) {
        return backendFactories.stream().anyMatch(f -> kind.equals(f.kind()));
    }

    /** Runs the retries of the configurations waiting for {@code kind}, on a thread of their own (not SCR's). */
    private void retryWaiting(String kind) {
        List<Runnable> due = new ArrayList<>();
        waiting.entrySet().removeIf(e -> {
            if (e.getValue().getKey().equals(kind)) {
                due.add(e.getValue().getValue());
                return true;
            }
            return false;
        });
        if (!due.isEmpty()) {
            Thread t = new Thread(() -> due.forEach(Runnable::run), "kickplug-attach-waiting-" + kind);
            t.setDaemon(true);
            t.start();
        }
    }

    /** Disks whose (asynchronous) backend the factory opened hold their requests until one of its kind is back. */
    void removeBackendFactory(BackendFactory factory) {
        backendFactories.remove(factory);
        backendFactoryGone(factory);
    }

    @Reference(name = "backendFilters", cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, unbind = "removeBackendFilter")
    void addBackendFilter(BackendFilter filter) {
        addFilter(filter);
    }

    void removeBackendFilter(BackendFilter filter) {
        removeFilter(filter);
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
        setPollPolicy(policy);
    }

    synchronized void unbindPollPolicy(PollPolicy policy) {
        // A greedy replacement binds the new policy before unbinding the old one.
        if (pollPolicy == policy) {
            pollPolicy = null;
            setPollPolicy(null);
        }
    }

    @Deactivate
    void deactivate() {
        // Before SCR unbinds ConfigAdmin (it does so after this method): the settings changed last are written,
        // and what is configured now comes back with the next manager, and callers still holding this one (kp:fio
        // waiting for its disk) must see that.
        flushSettings();
        configuredAtClose = configuredDisks();
        // Quiesce: every device resets and tells its guest it is gone; shared memory stays for the return.
        close();
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

    private boolean attached(String name) {
        return name != null && list().stream().anyMatch(d -> d.name().equals(name));
    }

    /**
     * Attaches the disk and records it as a configuration, so it outlives this bundle. A disk that has a
     * configuration already (kept in the state folder across a restart, or attached before) is not attached
     * twice: the same disk (equal but for the settings a user changes while it runs: size, ring, tracked lock) is
     * answered as it is, with its kept settings, so a start-up script may attach it again; another one is refused.
     */
    @Override
    public synchronized DiskInfo attach(DiskSpec spec) {
        Map<String, Object> kept = spec == null || spec.name() == null ? null : configuration(spec.name());
        if (kept != null) {
            return attachConfigured(spec, kept);
        }
        if (spec != null && spec.name() != null && shared != null && !attached(spec.name())) {
            try {
                shared.delete(spec.name()); // a new disk: nothing of an earlier one with that name
            } catch (IOException e) {
                throw new DiskException("cannot clear the shared memory of disk '" + spec.name() + "': "
                        + e.getMessage(), e);
            }
        }
        DiskInfo info = super.attach(spec);
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

    private Map<String, Object> configuration(String name) {
        ConfigurationAdmin admin = configAdmin;
        if (admin == null) {
            return null;
        }
        try {
            return DiskConfigStore.properties(admin, name);
        } catch (IOException e) {
            LOG.log(Level.WARNING, "disk " + name + ": cannot read its configuration: " + e);
            return null;
        }
    }

    /** {@link #attach} of a disk that has a configuration ({@code kept}). */
    private DiskInfo attachConfigured(DiskSpec spec, Map<String, Object> kept) {
        DiskSpecCheck.check(spec);
        String name = spec.name();
        DiskSpec keptSpec;
        try {
            keptSpec = DiskConfig.toSpec(kept);
        } catch (DiskException e) {
            throw new DiskException("disk '" + name + "' has a configuration already, a malformed one ("
                    + e.getMessage() + "): kp:detach it first");
        }
        List<String> differences = SpecDifferences.of(SpecDifferences.attachForm(keptSpec),
                SpecDifferences.attachForm(spec));
        if (!differences.isEmpty()) {
            throw new DiskException("a disk named '" + name + "' is already "
                    + (attached(name) ? "attached" : "configured") + " with other settings ("
                    + String.join("; ", differences) + "): kp:detach it first");
        }
        if (attached(name)) {
            return info(name);
        }
        // Being rebuilt from its configuration (its bundle, or the runtime, is starting): attached now, as its
        // configuration says, with its settings; its configuration component adopts it.
        DiskInfo info = super.attach(keptSpec);
        applyConfigured(name, kept);
        return info;
    }

    /**
     * The settings a user just changed on the running disk ({@code kp:notify}, {@code kp:poll},
     * {@code kp:tracked-lock}, {@code kp:ring}, {@code kp:resize}) are written into its configuration, so that the
     * disk comes back with them when it is rebuilt: by a thread of their own, shortly after, not on the caller's
     * path (a ConfigAdmin update writes a file; a strategy swap under load must stay as fast as a queue's switch).
     * Changes that come faster than the writes are written together, the latest settings each time. The
     * configuration component sees a change it need not apply.
     */
    @Override
    protected void settingsChanged(String name) {
        unrecorded.add(name);
        if (!recorderRunning) {
            recorderRunning = true;
            Thread t = new Thread(this::recordSettings, "kickplug-disk-settings");
            t.setDaemon(true);
            t.start();
        }
    }

    /** Disks whose settings changed live and are not written to their configurations yet; guarded by this. */
    private final Set<String> unrecorded = new LinkedHashSet<>();
    /** The disk whose settings the recorder writes now, or {@code null}; guarded by this. */
    private String recording;
    /** Whether the recorder thread runs; guarded by this. */
    private boolean recorderRunning;

    /** The recorder thread: writes each disk's settings as they are when their turn comes, until none is left. */
    private void recordSettings() {
        while (true) {
            String name;
            DiskSettings live;
            synchronized (this) {
                Iterator<String> next = unrecorded.iterator();
                if (!next.hasNext()) {
                    recorderRunning = false;
                    notifyAll();
                    return;
                }
                name = next.next();
                next.remove();
                if (!attached(name)) {
                    continue;
                }
                live = settings(name);
                recording = name;
            }
            try {
                record(name, live);
            } finally {
                synchronized (this) {
                    recording = null;
                    notifyAll();
                }
            }
        }
    }

    private void record(String name, DiskSettings live) {
        ConfigurationAdmin admin = configAdmin;
        if (admin == null) {
            LOG.log(Level.WARNING, "disk " + name + ": no ConfigAdmin, its settings will not outlive its bundles");
            return;
        }
        try {
            synchronized (configWrites) {
                DiskConfigStore.record(admin, name, live);
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "disk " + name + ": cannot keep its settings in its configuration, they will not "
                    + "outlive its bundles: " + e);
        }
    }

    /**
     * Returns once every settings change made before the call is written to its disk's configuration (or after
     * {@code RECORD_WAIT_MILLIS}): before this manager goes, and for tests.
     */
    synchronized void flushSettings() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RECORD_WAIT_MILLIS);
        try {
            while (recorderRunning) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.log(Level.WARNING, "the settings of disks " + unrecorded + " were not written within "
                            + RECORD_WAIT_MILLIS + " ms");
                    return;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits until the recorder is not writing {@code name}'s settings, and drops a pending write of them. */
    private void forgetUnrecorded(String name) {
        unrecorded.remove(name);
        try {
            while (name.equals(recording)) {
                wait();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final long RECORD_WAIT_MILLIS = 10_000;

    /**
     * Held for each read-modify-write of a disk's configuration: the recorder's, and another bundle's through
     * {@link #keepSettings}. ConfigAdmin replaces a configuration's properties whole, so two such writes that
     * overlap would undo one another. Never held while waiting for this component's monitor.
     */
    private final Object configWrites = new Object();

    /** Written at once, under {@link #configWrites} (a user command: {@code kp:throttle}). */
    @Override
    public boolean keepSettings(String disk, String prefix, Map<String, String> settings) {
        DiskConfig.checkForeignPrefix(prefix);
        ConfigurationAdmin admin = configAdmin;
        if (admin == null || disk == null) {
            return false;
        }
        try {
            synchronized (configWrites) {
                return DiskConfigStore.keep(admin, disk, prefix, settings);
            }
        } catch (IOException e) {
            throw new DiskException("disk '" + disk + "': cannot write its configuration: " + e.getMessage(), e);
        }
    }

    /**
     * Applies the settings of the disk's configuration as it is now ({@code delivered} only without ConfigAdmin),
     * under this monitor, where every live change is made: a configuration event that arrives after a newer live
     * change does not undo it. While a live change is on its way into the configuration (the configuration is
     * older than the disk), nothing is applied: the write that comes makes them equal.
     */
    @Override
    public synchronized void applyConfigured(String name, Map<String, ?> delivered) {
        if (!attached(name) || unrecorded.contains(name) || name.equals(recording)) {
            return;
        }
        Map<String, ?> props = configuration(name);
        try {
            applySettings(name, DiskSettings.of(props != null ? props : delivered));
        } catch (DiskException e) {
            LOG.log(Level.ERROR, "disk " + name + ": settings not applied from its configuration: " + e.getMessage());
        }
    }

    /**
     * Detaches the disk and deletes its configuration (and its shared memory). A disk that is configured but
     * not attached now (being rebuilt, or its backend failed) just loses its configuration.
     */
    @Override
    public synchronized void detach(String name) {
        forgetUnrecorded(name); // a late write must not reach a new disk's configuration of that name
        boolean attached = attached(name);
        DiskException failure = null;
        if (attached) {
            try {
                super.detach(name);
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
            super.detach(name); // the registry's "no disk named" error
        }
    }

    /**
     * Refuses a disk whose configuration a concurrent {@link #detach} deleted (ConfigAdmin is asynchronous). The
     * disk's settings are applied under this monitor, so a listing never shows it without them ({@code kp:swap}
     * waits for the disk to be listed, and what runs next sees its strategies, polling, ...).
     */
    @Override
    public synchronized DiskInfo rebuild(DiskSpec spec, Map<String, ?> props) {
        ConfigurationAdmin admin = configAdmin;
        try {
            if (admin != null && !DiskConfigStore.names(admin).contains(spec.name())) {
                throw new DiskException("disk '" + spec.name() + "' was detached: its configuration is gone");
            }
        } catch (IOException e) {
            LOG.log(Level.WARNING, "cannot list the disk configurations: " + e);
        }
        if (!attached(spec.name())) {
            super.attach(spec);
        } // else kp:attach of the same disk came first: adopted
        applyConfigured(spec.name(), props);
        return info(spec.name());
    }

    /** Detaches without touching the configuration: the disk's configuration component went away. */
    @Override
    public synchronized void release(String name) {
        forgetUnrecorded(name); // its configuration is gone or changing: the disk comes back as it says
        waiting.remove(name);
        if (attached(name)) {
            super.detach(name);
        }
    }

    /**
     * Under this monitor, so that an {@link #attach} (disk, then its configuration) is seen whole: a
     * configuration of that name present now belongs to a newer disk of the same name.
     */
    @Override
    public synchronized void releaseDeleted(String name) {
        ConfigurationAdmin admin = configAdmin;
        try {
            if (admin != null && DiskConfigStore.names(admin).contains(name)) {
                LOG.log(Level.DEBUG, "disk " + name + ": an older configuration's deletion arrived after the disk "
                        + "was attached again; the new disk stays");
                return;
            }
        } catch (IOException e) {
            LOG.log(Level.WARNING, "cannot list the disk configurations: " + e);
        }
        release(name);
    }

    @Override
    public List<String> configuredDisks() {
        List<String> names = new ArrayList<>(list().stream().map(DiskInfo::name).toList());
        ConfigurationAdmin admin = configAdmin;
        if (admin == null) {
            // Deactivated (ConfigAdmin unbound after deactivate): the disks configured then are on their way back.
            configuredAtClose.stream().filter(n -> !names.contains(n)).forEach(names::add);
        } else {
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
}
