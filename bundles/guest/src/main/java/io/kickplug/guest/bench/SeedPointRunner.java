package io.kickplug.guest.bench;

import io.kickplug.guest.engine.ModelCosts;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.lockstat.LockStats;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.engine.CpuPinning;
import io.kickplug.guest.engine.GuestEngine;
import io.kickplug.guest.engine.GuestMachine;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.SynchronousNotify;
import io.kickplug.guest.engine.VirtualTime;
import io.kickplug.guest.fio.FioReport;
import io.kickplug.guest.fio.FioRunner;
import io.kickplug.guest.fio.JobResult;
import io.kickplug.guest.fio.JobSpec;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Runs one point of {@link SeedsBench} in the simulated guest: attaches a temporary disk (with virtual-time I/O
 * threads, or ioeventfd off in real threads, as the point's {@link SeedClock} says), boots a machine, runs the fio
 * jobs, detaches the disk, and measures the run ({@link SeedPoint}: IOPS, the device's counters, the disk's lock
 * statistics, virtual time's long slices). It knows nothing of the seeds, their rounds or their verdicts.
 */
final class SeedPointRunner {

    private final DiskManager disks;
    private final VirtqueueFactory virtqueues;
    private final GuestEngine engine;
    private final LockStats lockStats;
    private final NotificationControl notifications;
    /** The runtime's I/O threads, for ioeventfd off in real threads ({@link SynchronousNotify}); may be null. */
    private IoThreadFactory ioThreads;

    SeedPointRunner(DiskManager disks, VirtqueueFactory virtqueues, GuestEngine engine, LockStats lockStats,
            NotificationControl notifications) {
        this.disks = Objects.requireNonNull(disks, "disks");
        this.virtqueues = Objects.requireNonNull(virtqueues, "virtqueues");
        this.engine = Objects.requireNonNull(engine, "engine");
        this.lockStats = Objects.requireNonNull(lockStats, "lockStats");
        this.notifications = Objects.requireNonNull(notifications, "notifications");
    }

    /** With the runtime's I/O thread factory: ioeventfd off runs in real threads with it. */
    void ioThreads(IoThreadFactory factory) {
        this.ioThreads = factory;
    }

    /**
     * Attaches {@code spec} (with virtual-time I/O threads when {@code how} says so, tie-break seed
     * {@code tieBreak}), lets {@code setup} configure it, boots a machine, runs the jobs and detaches the disk. The
     * lock statistics are reset before the run; the device's counters are taken after the boot and after the run.
     */
    SeedPoint run(DiskSpec spec, MachineConfig config, List<JobSpec> jobs, Consumer<String> setup, SeedClock how,
            long tieBreak) {
        // Pinned: every other thread leaves the actors' CPU for the point, and the actors' clock is the wall clock.
        CpuPinning.Reservation core = how.virtual() && how.pinCpus() != null ? CpuPinning.reserve(how.pinCpus()) : null;
        ModelCosts costs = SeedClock.modelCosts();
        VirtualTime time = !how.virtual() ? null : core != null ? VirtualTime.pinned(tieBreak, how.charging(),
                costs, how.ioeventfd(), how.pinCpus())
                : new VirtualTime(tieBreak, how.charging(), costs, how.ioeventfd());
        if (time == null && !how.ioeventfd() && ioThreads != null) {
            disks.attach(spec, new SynchronousNotify(ioThreads)); // ioeventfd off in real threads
        } else if (time == null) {
            disks.attach(spec);
        } else {
            disks.attach(spec, time);
        }
        DeviceWork work = time == null ? null : new DeviceWork(notifications, spec.name());
        if (work != null) {
            time.deviceWork(work);
        }
        try {
            setup.accept(spec.name());
            FioReport report;
            List<QueueCounters> before;
            List<QueueCounters> after;
            List<LockStatRow> locks;
            long features;
            try (GuestMachine machine = time == null ? engine.boot(disks.port(spec.name()), virtqueues, config)
                    : engine.boot(disks.port(spec.name()), virtqueues, config, time)) {
                features = machine.features();
                lockStats.reset();
                before = notifications.counters(spec.name());
                report = FioRunner.run(machine, spec.name(), jobs);
                after = notifications.counters(spec.name());
                // Before the machine closes: in virtual time the close lets every thread run freely.
                locks = lockStats.rows().stream().filter(r -> r.name().startsWith(spec.name() + " ")).toList();
            }
            if (report.failed()) {
                throw new IllegalStateException("benchmark run on " + spec.name() + " failed: "
                        + String.join("; ", report.errorLines()));
            }
            JobResult all = JobResult.merge(report.jobs());
            long ios = all.read().ios() + all.write().ios();
            double iops = all.runtimeNanos() == 0 ? 0 : ios * 1e9 / all.runtimeNanos();
            QueueDeltas d = QueueDeltas.between(before, after);
            return new SeedPoint(all, iops, d.requests(), d.interruptsSent(), d.interruptsSuppressed(), d.strategies(),
                    locks, d.kicks(), features, time == null ? 0 : time.longSlices(),
                    time == null ? 0 : time.longSliceNanos(), time == null ? 0 : time.guestCpuNanos(),
                    time == null ? 0 : time.deviceCpuNanos());
        } finally {
            if (work != null) {
                work.stop();
            }
            disks.detach(spec.name());
            if (core != null) {
                core.close();
            }
        }
    }

    /** The engine's defaults with the vCPUs given, the default latencies and outside-lock kicks. */
    MachineConfig machine(String name, int vcpus) {
        return engine.defaults(name).withVcpus(vcpus).withLatencies(MachineConfig.DEFAULT_EXIT_LATENCY_NS,
                MachineConfig.DEFAULT_INJECT_LATENCY_NS).withKickPolicy(MachineConfig.DEFAULT_KICK_POLICY)
                .withPollQueues(0);
    }

    /** A disk name of the seed ({@link SeedsBench#DISK_PREFIX}) no attached disk has. */
    String freeName(String seed) {
        Set<String> taken = new HashSet<>();
        disks.list().forEach(d -> taken.add(d.name()));
        String name = SeedsBench.DISK_PREFIX + seed;
        for (int i = 2; taken.contains(name); i++) {
            name = SeedsBench.DISK_PREFIX + seed + "-" + i;
        }
        return name;
    }

    /**
     * The disk's completed requests, for the model's device cost, read by the disk's virtual I/O threads. They
     * may run one more iteration after the time shut down, while the point detaches the disk: detaching holds
     * the disk manager's lock and waits for them to end, so from {@link #stop} on they take the last count
     * rather than ask the disk manager (which would wait for its lock until the detach gave up on the thread).
     */
    static final class DeviceWork implements LongSupplier {
        private final NotificationControl notifications;
        private final String disk;
        private long last;
        private boolean stopped;

        DeviceWork(NotificationControl notifications, String disk) {
            this.notifications = notifications;
            this.disk = disk;
        }

        @Override
        public synchronized long getAsLong() {
            if (!stopped) {
                try {
                    last = notifications.counters(disk).stream().mapToLong(QueueCounters::requests).sum();
                } catch (DiskException gone) {
                    stopped = true; // detached: no more work
                }
            }
            return last;
        }

        /** Waits for a read under way, then answers the last count; called before the detach. */
        synchronized void stop() {
            stopped = true;
        }
    }
}
