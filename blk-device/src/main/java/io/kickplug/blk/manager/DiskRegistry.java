package io.kickplug.blk.manager;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendFilter;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.lockstat.LockStatSource;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.memory.MemoryLease;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollPolicy;
import io.kickplug.api.poll.PollStatus;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.TransportFactory;
import io.kickplug.api.transport.TransportInstance;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.blk.DiskPort;
import io.kickplug.blk.device.BlkDeviceSpec;
import io.kickplug.blk.device.QueueMapping;
import io.kickplug.blk.device.VirtioBlkDevice;
import io.kickplug.blk.notify.NotifierRegistry;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The attached disks: the {@link DiskManager}, {@link NotificationControl} and {@link LockStatSource} services
 * without OSGi ({@link DiskManagerComponent} adds the OSGi wiring and the disks' configurations). Attach either
 * completes or leaves nothing behind. Thread-safe: one operation at a time.
 */
public class DiskRegistry implements DiskManager, NotificationControl, LockStatSource, AutoCloseable {

    private static final Logger LOG = System.getLogger(DiskRegistry.class.getName());

    private final IoThreadFactory ioThreadFactory;
    /** Opens and closes the parts each disk is made of. */
    private final DiskParts parts;
    private final NotifierRegistry notifiers;
    private final Map<String, AttachedDisk> disks = new LinkedHashMap<>();
    /** The bound poll policy, or {@code null}. */
    private PollPolicy pollPolicy;
    /**
     * Where memory disks keep their bytes and disks their guest memory so that both outlive this bundle, or
     * {@code null} for process memory (gone with the disk).
     */
    private SharedMemory shared;
    /** True while {@link #close} quiesces: the disks' shared memory is kept for their return. */
    private boolean quiescing;
    /** Devices handed out by {@link #exportDevice} and ports by {@link #openPort}, per disk. */
    private final DiskExports exports;
    /**
     * The strategy set for each queue of each attached disk ({@link #setStrategy}), its exports' queues included:
     * what a device made later (an export, the disk after {@link #setRing}) starts with.
     */
    private final Map<String, QueueStrategies> strategies = new LinkedHashMap<>();

    /**
     * @param backendFactories the backend factories available at the moment of the call
     */
    public DiskRegistry(TransportFactory transports, IoThreadFactory ioThreadFactory,
            GuestMemoryFactory memoryFactory, Supplier<? extends Collection<BackendFactory>> backendFactories) {
        this(transports, ioThreadFactory, memoryFactory, backendFactories, new NotifierRegistry());
    }

    /**
     * @param backendFactories the backend factories available at the moment of the call
     * @param notifiers the completion-notification strategies the disks' queues choose from
     */
    public DiskRegistry(TransportFactory transports, IoThreadFactory ioThreadFactory,
            GuestMemoryFactory memoryFactory, Supplier<? extends Collection<BackendFactory>> backendFactories,
            NotifierRegistry notifiers) {
        this.notifiers = Objects.requireNonNull(notifiers, "notifiers");
        Objects.requireNonNull(transports, "transports");
        this.ioThreadFactory = Objects.requireNonNull(ioThreadFactory, "ioThreadFactory");
        this.parts = new DiskParts(transports, memoryFactory, backendFactories);
        this.exports = new DiskExports(notifiers, this);
    }

    /**
     * Keeps memory disks' bytes and the disks' guest memory in named shared-memory files from now on
     * ({@code null}: in process memory). Files of a disk are deleted at {@link #detach}, kept by {@link #close}.
     */
    public synchronized void setSharedMemory(SharedMemory shared) {
        this.shared = shared;
    }

    @Override
    public synchronized DiskInfo attach(DiskSpec spec) {
        return attachNow(spec, ioThreadFactory);
    }

    /** Attaches with the I/O threads of {@code ioThreads} (DiskManager's benchmark form; no configuration). */
    @Override
    public synchronized DiskInfo attach(DiskSpec spec, IoThreadFactory ioThreads) {
        return attachNow(spec, ioThreads);
    }

    /** What {@link #attach} does; {@link #setRing} uses it too, so a subclass's attach is not called then. */
    private DiskInfo attachNow(DiskSpec spec, IoThreadFactory ioThreads) {
        Objects.requireNonNull(ioThreads, "ioThreads");
        BackendFactory factory = validate(spec);
        QueueMapping mapping = QueueMapping.of(spec.mapping(), spec.numQueues(), spec.ioThreads());
        String name = spec.name();
        BlockBackend backend = null;
        List<IoThread> threads = new ArrayList<>();
        VirtioBlkDevice device = null;
        TransportInstance transport = null;
        MemoryLease memoryLease = null;
        try {
            DiskSpec opened = DiskParts.withSharedBytes(spec, shared);
            backend = bindings.adopt(name, DiskParts.open(factory, opened), factory, opened.backend());
            for (int i = 0; i < spec.ioThreads(); i++) {
                threads.add(ioThreads.start("kickplug-blk-" + name + "-io" + i));
            }
            device = new VirtioBlkDevice(BlkDeviceSpec.of(name, backend, spec.backend().readOnly(), spec.numQueues(),
                    spec.queueSize(), DiskParts.serial(spec), threads).withMapping(mapping)
                    .withTrackedLock(spec.trackedLock())
                    .withWorkers(spec.workers()).withNotifiers(notifiers).withFilter(bindings.chainFor(name)));
            device.setRing(spec.ring());
            device.setAvailEvent(spec.availEvent());
            device.setPollPolicy(pollPolicy);
            GuestMemory memory = parts.allocate(spec, shared);
            // The registry's lease: the guest memory stays mapped while the disk is attached (issue 18).
            memoryLease = memory.lease();
            transport = parts.createTransport(spec, device, memory);
            NotifierRegistry.Listener listener = device::strategiesChanged;
            AttachedDisk disk = new AttachedDisk(spec, backend, device, List.copyOf(threads), transport, listener,
                    memoryLease);
            notifiers.addListener(listener);
            disks.put(name, disk);
            strategies.put(name, QueueStrategies.IMMEDIATE);
            BlockBackend watched = backend;
            backend.watchSize(newSize -> storageResized(name, watched, newSize));
            LOG.log(Level.INFO, "attached disk " + name + " (" + backend.kind() + ", " + backend.size() + " bytes, "
                    + spec.transport().label() + ")");
            return disk.info();
        } catch (RuntimeException | Error e) {
            List<Throwable> cleanup = new ArrayList<>();
            DiskParts.release(transport, device, threads, backend, cleanup);
            bindings.forget(name);
            if (memoryLease != null && cleanup.isEmpty()) {
                memoryLease.close();
            }
            cleanup.forEach(e::addSuppressed);
            if (e instanceof DiskException) {
                throw e;
            }
            throw new DiskException("cannot attach disk '" + name + "': " + e, e);
        }
    }

    @Override
    public synchronized void detach(String name) {
        removeDisk(name);
    }

    /** What {@link #detach} does; {@link #close} uses it too, so a subclass's detach is not called then. */
    private void removeDisk(String name) {
        AttachedDisk disk = disks.remove(name);
        if (disk == null) {
            throw noSuchDisk(name);
        }
        strategies.remove(name);
        notifiers.removeListener(disk.listener());
        bindings.failHeld(name); // a reset would wait in vain for requests held while the backend is away
        List<Throwable> failures = new ArrayList<>();
        exports.closeAll(name, failures); // ports, then exported devices
        // Closing the transport resets the device, which waits for in-flight requests (section 2.4).
        DiskParts.release(disk.transport(), disk.device(), disk.threads(), disk.backend(), failures);
        bindings.forget(name);
        // The device and its I/O threads are out of the guest memory now: the registry's lease ends, and the
        // mapping goes at once unless a simulated guest still holds its own lease (then when its machine closes).
        // Not when closing something failed: an I/O thread might still be in the rings; the GC frees it then.
        if (failures.isEmpty()) {
            disk.memoryLease().close();
        }
        if (shared != null && !quiescing) {
            try {
                shared.delete(name);
            } catch (IOException | RuntimeException e) {
                failures.add(e);
            }
        }
        if (!failures.isEmpty()) {
            DiskException e = new DiskException("disk '" + name + "' detached, but cleaning up failed: "
                    + failures.get(0));
            failures.forEach(e::addSuppressed);
            throw e;
        }
        LOG.log(Level.INFO, "detached disk " + name);
    }

    /**
     * Switches the tracked-requests lock of a running disk; requests in flight finish under their lock.
     *
     * @throws DiskException for an unknown disk or no kind
     */
    @Override
    public synchronized DiskInfo setTrackedLock(String name, TrackedLockKind kind) {
        DiskInfo info = switchTrackedLock(name, kind);
        settingsChanged(name);
        return info;
    }

    private DiskInfo switchTrackedLock(String name, TrackedLockKind kind) {
        AttachedDisk disk = find(name);
        if (kind == null) {
            throw new DiskException("no tracked lock kind given (expected yielding, mutex or sharded)");
        }
        disk.device().setTrackedLock(kind);
        // The disk's exported devices (vhost-user) switch with it: one lock kind per disk.
        exportedDevices(name).forEach(d -> d.setTrackedLock(kind));
        // A re-attach (kp:ring) keeps it.
        disks.put(name, disk.withSpec(disk.spec().withTrackedLock(kind)));
        LOG.log(Level.INFO, "disk " + name + ": tracked-requests lock is now " + kind.label());
        return disk.info();
    }

    /**
     * Quiesces the disk as a bundle swap does (device reset, transport closed: the guest is told the device
     * went), keeping its shared bytes and guest memory, and attaches it again offering {@code format}.
     */
    @Override
    public synchronized DiskInfo setRing(String name, RingFormat format) {
        DiskInfo info = swapRing(name, format);
        settingsChanged(name);
        return info;
    }

    /** The disk comes back with its other settings: tracked lock and size (in its spec), strategies, polling. */
    private DiskInfo swapRing(String name, RingFormat format) {
        AttachedDisk disk = find(name);
        if (disk.spec().ring() == format) {
            return disk.info();
        }
        if (shared == null) {
            throw new DiskException("disk '" + name + "': swapping the ring format needs the shared-memory files "
                    + "(the guest keeps its memory across the swap)");
        }
        DiskSpec next = disk.spec().withRing(format);
        QueueStrategies plan = strategies.get(name);
        PollStatus polling = disk.device().pollStatus();
        quiescing = true;
        try {
            removeDisk(name);
        } finally {
            quiescing = false;
        }
        DiskInfo info = attachNow(next, ioThreadFactory);
        VirtioBlkDevice device = find(name).device();
        strategies.put(name, plan);
        StrategySwitch.apply(plan, device);
        device.setPolling(polling.requested(), polling.params());
        LOG.log(Level.INFO, "disk " + name + " now offers " + format.id() + " rings");
        return info;
    }

    /**
     * Resizes a disk: the backend changes size, then the device announces the new capacity with a
     * configuration-change notification (VIRTIO 1.2 section 5.2.6.2). Requests already validated against
     * the old capacity that reach past a smaller one fail with IOERR in the backend.
     */
    @Override
    public synchronized DiskInfo resize(String name, long newSizeBytes) {
        DiskInfo info = resizeNow(name, newSizeBytes);
        settingsChanged(name);
        return info;
    }

    private DiskInfo resizeNow(String name, long newSizeBytes) {
        AttachedDisk disk = find(name);
        AttachedDisk resized = DiskResize.resize(disk, newSizeBytes, exports.devices(name), false);
        if (resized != disk) {
            disks.put(name, resized);
        }
        return disk.info();
    }

    /**
     * The storage under {@code backend}, the backend of disk {@code name}, changed size by itself
     * ({@link BlockBackend#watchSize}: another client resized a shared RBD image): the disk takes the new size as
     * {@link #resize} does (a smaller one too), read-only or not, and the guest is told (VIRTIO 1.2 section 5.2.6.2).
     * Nothing when the disk is gone or has another backend by now. A size the disk cannot take is logged.
     */
    private void storageResized(String name, BlockBackend backend, long newSize) {
        synchronized (this) {
            AttachedDisk disk = disks.get(name);
            if (disk == null || disk.backend() != backend) {
                return;
            }
            try {
                AttachedDisk resized = DiskResize.resize(disk, newSize, exports.devices(name), true);
                if (resized != disk) {
                    disks.put(name, resized);
                }
                settingsChanged(name);
            } catch (DiskException e) {
                LOG.log(Level.WARNING, "disk " + name + ": its storage now has " + newSize + " bytes, but the disk "
                        + "cannot take that size: " + e.getMessage());
            }
        }
    }

    /**
     * Turns device-side polling of a disk on or off ({@code params} {@code null}: keep the disk's).
     *
     * @throws DiskException for an unknown disk
     */
    @Override
    public synchronized PollStatus setPolling(String name, boolean enabled, PollParams params) {
        PollStatus status = switchPolling(name, enabled, params);
        settingsChanged(name);
        return status;
    }

    private PollStatus switchPolling(String name, boolean enabled, PollParams params) {
        PollStatus status = find(name).device().setPolling(enabled, params);
        // Exported devices (vhost-user) poll with the disk's settings too.
        exports.devices(name).forEach(d -> d.setPolling(enabled, status.params()));
        LOG.log(Level.INFO, "disk " + name + ": polling " + (enabled ? "on" : "off") + ", poll-max-ns "
                + status.params().maxNs() + (enabled && !status.active() ? " (no poll policy bound yet)" : ""));
        return status;
    }

    @Override
    public synchronized PollStatus pollStatus(String name) {
        return find(name).device().pollStatus();
    }

    /**
     * Binds the poll policy for every disk, now and later ({@code null}: none). Disks that asked for polling
     * start or stop polling at their I/O threads' next loop iteration.
     */
    public synchronized void setPollPolicy(PollPolicy policy) {
        pollPolicy = policy;
        for (AttachedDisk disk : disks.values()) {
            disk.device().setPollPolicy(policy);
        }
        exports.allDevices().forEach(d -> d.setPollPolicy(policy));
    }

    /**
     * Configures the completion-notification strategy of one queue ({@code queue >= 0}) or all queues of a
     * disk and waits (briefly) until the active queues have switched. A name that no bound service carries
     * is accepted: those queues use immediate until it is bound.
     *
     * @throws DiskException for an unknown disk or queue, or a malformed name
     */
    @Override
    public List<QueueCounters> setStrategy(String name, String strategy, int queue) {
        StrategySwitch.Pending pending;
        synchronized (this) {
            pending = StrategySwitch.configure(name, find(name).device(), exportedDevices(name), strategy, queue);
            strategies.put(name, strategies.get(name).with(pending.strategy(), queue));
            settingsChanged(name);
        }
        // Not under this monitor: the queues switch on their I/O threads.
        return pending.await();
    }

    /**
     * Called under this registry's monitor after each live change of a disk's settings ({@link #setStrategy},
     * {@link #setPolling}, {@link #setTrackedLock}, {@link #setRing}, {@link #resize}), once it is made: where a
     * subclass keeps them ({@link DiskManagerComponent}: in the disk's configuration, written by a thread of its
     * own). Nothing here; it must not block.
     */
    protected void settingsChanged(String name) {
    }

    /**
     * The settings of a disk as it runs now, in the form its configuration keeps them.
     *
     * @throws DiskException for an unknown disk
     */
    public synchronized DiskSettings settings(String name) {
        AttachedDisk disk = find(name);
        PollStatus polling = disk.device().pollStatus();
        return new DiskSettings(strategies.get(name), polling.requested(), polling.params(),
                disk.device().trackedRequests().kind(), disk.spec().ring(), disk.backend().size());
    }

    /**
     * Brings a running disk to {@code wanted} (settings read from its configuration: the disk was rebuilt from it,
     * or it changed), each through its live path and only where it differs: a ring format swap resets the device
     * as {@link #setRing} does; the tracked lock, the size, the strategies and polling change without a reset.
     * Nothing is written back ({@link #settingsChanged} is not called): these settings come from where it writes.
     * A setting that cannot be applied (a backend that cannot resize) is logged and the others still are.
     *
     * @return whether anything changed
     * @throws DiskException for an unknown disk
     */
    public synchronized boolean applySettings(String name, DiskSettings wanted) {
        DiskSettings live = settings(name);
        if (wanted.satisfiedBy(live)) {
            return false;
        }
        List<String> failed = new ArrayList<>();
        if (wanted.ring() != live.ring()) {
            tryApply(failed, "ring", () -> swapRing(name, wanted.ring()));
        }
        if (wanted.trackedLock() != live.trackedLock()) {
            tryApply(failed, "tracked lock", () -> switchTrackedLock(name, wanted.trackedLock()));
        }
        if (wanted.sizeBytes() != 0 && wanted.sizeBytes() != live.sizeBytes()) {
            tryApply(failed, "size", () -> resizeNow(name, wanted.sizeBytes()));
        }
        if (!wanted.strategies().equals(live.strategies())) {
            strategies.put(name, wanted.strategies());
            StrategySwitch.apply(wanted.strategies(), find(name).device());
            for (VirtioBlkDevice exported : exportedDevices(name)) {
                StrategySwitch.apply(wanted.strategies(), exported);
            }
            QueueStrategies s = wanted.strategies();
            LOG.log(Level.INFO, "disk " + name + ": completion notifiers " + s.all()
                    + (s.perQueue().isEmpty() ? "" : ", queues " + s.formatPerQueue()));
        }
        if (wanted.poll() != live.poll() || !wanted.pollParams().equals(live.pollParams())) {
            tryApply(failed, "polling", () -> switchPolling(name, wanted.poll(), wanted.pollParams()));
        }
        if (!failed.isEmpty()) {
            LOG.log(Level.WARNING, "disk " + name + ": not applied from its configuration: "
                    + String.join("; ", failed));
        }
        return true;
    }

    private static void tryApply(List<String> failed, String what, Runnable apply) {
        try {
            apply.run();
        } catch (DiskException e) {
            failed.add(what + ": " + e.getMessage());
        }
    }

    private synchronized List<VirtioBlkDevice> exportedDevices(String name) {
        return exports.devices(name);
    }

    /** The per-queue counters of a disk's exported devices, in export order. */
    @Override
    public List<QueueCounters> exportCounters(String name) {
        device(name); // an unknown disk is refused
        List<QueueCounters> out = new ArrayList<>();
        for (VirtioBlkDevice d : exportedDevices(name)) {
            out.addAll(d.queueCounters());
        }
        return out;
    }

    /** The per-queue counters of a disk. */
    @Override
    public List<QueueCounters> counters(String name) {
        return device(name).queueCounters();
    }

    /** Strategy names bound now, immediate included. */
    @Override
    public List<String> strategies() {
        return notifiers.names();
    }

    /**
     * The lock statistics of every disk's tracked-requests locks: one row per disk and lock kind in use now
     * or used before ("d1 tracked-mutex"; a sharded lock's shards together).
     */
    @Override
    public synchronized List<LockStatRow> lockStats() {
        List<LockStatRow> rows = new ArrayList<>();
        for (AttachedDisk disk : disks.values()) {
            String name = disk.spec().name();
            TrackedLockRows.add(rows, disk.device().trackedRequests(), name);
            // Each exported device's own tracked-requests lock ("d1 export0 tracked-mutex").
            List<VirtioBlkDevice> exported = exports.devices(name);
            for (int i = 0; i < exported.size(); i++) {
                TrackedLockRows.add(rows, exported.get(i).trackedRequests(), name + " export" + i);
            }
        }
        return rows;
    }

    /** Zeroes the tracked-requests lock statistics of every disk and of its exported devices. */
    @Override
    public synchronized void resetLockStats() {
        for (AttachedDisk disk : disks.values()) {
            TrackedLockRows.reset(disk.device().trackedRequests());
            for (VirtioBlkDevice e : exports.devices(disk.spec().name())) {
                TrackedLockRows.reset(e.trackedRequests());
            }
        }
    }

    @Override
    public synchronized List<DiskInfo> list() {
        return disks.values().stream().map(AttachedDisk::info).toList();
    }

    @Override
    public synchronized DiskInfo info(String name) {
        return find(name).info();
    }

    /** Sum of the disk's I/O threads' CPU time, or -1 when not measurable. */
    @Override
    public synchronized long ioThreadCpuNanos(String name) {
        long sum = 0;
        for (IoThread t : find(name).threads()) {
            long n = t.cpuTimeNanos();
            if (n < 0) {
                return -1;
            }
            sum += n;
        }
        return sum;
    }

    @Override
    public synchronized GuestPort port(String name) {
        GuestPort port = find(name).transport().port();
        if (port == null) {
            throw new DiskException("disk '" + name + "' has no in-process transport");
        }
        return port;
    }

    /**
     * A fresh device over the disk's backend and I/O threads for an out-of-registry transport (vhost-user);
     * {@link #detach} resets it before closing the backend.
     */
    @Override
    public synchronized VirtioBlkDevice exportDevice(String name, int numQueues) {
        AttachedDisk disk = find(name);
        if (numQueues < 1 || numQueues > DiskSpec.MAX_QUEUES) {
            throw new DiskException("number of queues " + numQueues + " is not in 1.." + DiskSpec.MAX_QUEUES);
        }
        // Same backend, I/O threads (round-robin), tracked lock, workers and notification strategies as the disk.
        DiskSpec spec = disk.spec();
        VirtioBlkDevice device = new VirtioBlkDevice(BlkDeviceSpec.of(name, disk.backend(), spec.backend().readOnly(),
                numQueues, spec.queueSize(), DiskParts.serial(spec), disk.threads())
                .withMapping(QueueMapping.of(List.of(), numQueues, disk.threads().size()))
                .withTrackedLock(disk.device().trackedRequests().kind()).withWorkers(spec.workers()).withNotifiers(notifiers)
                .withFilter(bindings.chainFor(name)));
        // Start with the strategies set for the disk's queues (kp:notify), queue by queue, and for the queues only
        // an export has (kp:notify --queue N past the disk's queues).
        StrategySwitch.apply(strategies.get(name), device);
        // ... and the disk's device-side polling settings and the bound poll policy.
        PollStatus polling = disk.device().pollStatus();
        device.setPollPolicy(pollPolicy);
        device.setPolling(polling.requested(), polling.params());
        exports.addDevice(name, device);
        return device;
    }

    /**
     * A port over the disk's device: its requests share the device's tracked list, filters and backend with the
     * guest's. {@link #detach} closes it first (waiting for its requests), then runs {@code detached}.
     */
    @Override
    public synchronized DiskPort openPort(String name, Runnable detached) {
        AttachedDisk disk = find(name);
        java.util.Objects.requireNonNull(detached, "detached");
        DiskPort port = exports.openPort(name, disk.device(), detached);
        LOG.log(Level.INFO, "disk " + name + ": port opened");
        return port;
    }

    /** Forgets an exported device (its transport reset it) and ends its worker pool. */
    @Override
    public synchronized void releaseExport(String name, VirtioDevice device) {
        exports.releaseDevice(name, device);
    }

    /** The device of a disk, for diagnostics and tests. */
    public synchronized VirtioBlkDevice device(String name) {
        return find(name).device();
    }

    /**
     * Quiesces every disk: each device is reset (in-flight requests complete), its guest told the device is
     * gone, its threads and backend closed; the disks' shared memory (memory disks' bytes, guest memory) is
     * kept, so a registry that attaches them again from their configurations finds them as they were.
     */
    @Override
    public synchronized void close() {
        quiescing = true;
        try {
            for (String name : new ArrayList<>(disks.keySet())) {
                try {
                    removeDisk(name);
                } catch (DiskException e) {
                    LOG.log(Level.WARNING, e.getMessage(), e);
                }
            }
        } finally {
            quiescing = false;
        }
    }

    private AttachedDisk find(String name) {
        AttachedDisk disk = disks.get(name);
        if (disk == null) {
            throw noSuchDisk(name);
        }
        return disk;
    }

    private static DiskException noSuchDisk(String name) {
        return new DiskException("no disk named '" + name + "'");
    }

    /** Backend filters and asynchronous backends' factories of other bundles, as the disks use them. */
    private final BackendBindings bindings = new BackendBindings();

    /** A filter service arrived: every device's filter chain is rebuilt with it (no reset). */
    public void addFilter(BackendFilter filter) {
        bindings.addFilter(filter);
    }

    /** A filter service left: every device's filter chain is rebuilt without it; its wrappers are retired. */
    public void removeFilter(BackendFilter filter) {
        bindings.removeFilter(filter);
    }

    /** A backend factory service left: disks whose asynchronous backend it opened hold their requests. */
    public void backendFactoryGone(BackendFactory factory) {
        bindings.factoryGone(factory);
    }

    /** A backend factory service arrived: held disks of its kind open their backends again and resume. */
    public void backendFactoryArrived(BackendFactory factory) {
        bindings.factoryArrived(factory);
    }

    /** Checks every field of {@code spec} and that its name is free; returns the factory of its backend kind. */
    private BackendFactory validate(DiskSpec spec) {
        DiskSpecCheck.check(spec);
        if (disks.containsKey(spec.name())) {
            throw new DiskException("a disk named '" + spec.name() + "' is already attached");
        }
        return parts.factoryFor(spec.backend().kind());
    }
}
