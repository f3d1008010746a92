package io.kickplug.sdk.testkit;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendFilter;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.notify.NotifierRegistry;
import io.kickplug.guest.engine.GuestMachine;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.guest.fio.Fio;
import io.kickplug.guest.fio.FioInvocation;
import io.kickplug.guest.fio.FioReport;
import io.kickplug.guest.fio.FioRunner;
import io.kickplug.guest.fio.JobResult;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The host side in one process, without OSGi: the real virtio-blk device, split rings, virtio-mmio transport, I/O
 * threads and guest memory (the disk manager's {@link DiskRegistry}), with the backends and strategies a test gives
 * it, and the simulated guest whose fio drives a disk. Close it after the test.
 */
public final class InProcessDevice implements AutoCloseable {

    /** The disk every contract test attaches. */
    public static final String DISK = "kit";

    private final NotifierRegistry notifiers = new NotifierRegistry();
    private final DiskRegistry disks;
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();
    private final VirtqueueFactoryComponent virtqueues = new VirtqueueFactoryComponent();
    private long serviceIds = 1;

    /** With the memory backend and {@code backends}. */
    public InProcessDevice(BackendFactory... backends) {
        List<BackendFactory> all = new ArrayList<>(List.of(backends));
        all.add(new MemoryBackendFactory());
        disks = new DiskRegistry(new TransportFactoryComponent(new VirtqueueFactoryComponent()),
                new IoThreadFactoryComponent(), new GuestMemoryFactoryComponent(), () -> all, notifiers);
    }

    /** The disk manager, NotificationControl included. */
    public DiskRegistry disks() {
        return disks;
    }

    /** Registers a strategy service as OSGi would (ranking 0, a new service id). */
    public void addStrategy(String name, io.kickplug.api.notify.CompletionNotifier strategy) {
        notifiers.add(name, strategy, 0, serviceIds++);
    }

    /** Unregisters a strategy service: the queues using it fall back to immediate. */
    public void removeStrategy(io.kickplug.api.notify.CompletionNotifier strategy) {
        notifiers.remove(strategy);
    }

    public void addFilter(BackendFilter filter) {
        disks.addFilter(filter);
    }

    public void removeFilter(BackendFilter filter) {
        disks.removeFilter(filter);
    }

    /** Attaches {@link #DISK} on virtio-mmio with {@code queues} queues on {@code threads} I/O threads. */
    public void attach(BackendSpec backend, int queues, int threads) {
        disks.attach(new DiskSpec(DISK, backend, TransportKind.MMIO, queues, DiskSpec.DEFAULT_QUEUE_SIZE, threads,
                null, DiskSpec.DEFAULT_GUEST_MEMORY));
    }

    /** A 16 MiB memory disk. */
    public void attachMemory(int queues, int threads) {
        attach(new BackendSpec("memory", null, 16L << 20, false), queues, threads);
    }

    /** The simulated guest's settings: {@code vcpus} vCPUs, EVENT_IDX on or off, a 10 s request timeout. */
    public static MachineConfig machine(int vcpus, boolean eventIdx) {
        MachineConfig base = MachineConfig.defaults(DISK).withVcpus(vcpus).withTimeout(Duration.ofSeconds(10));
        long features = base.supportedFeatures();
        return base.withFeatures(eventIdx ? features | VirtioFeatures.RING_EVENT_IDX
                : features & ~VirtioFeatures.RING_EVENT_IDX);
    }

    /** Boots the simulated guest on {@link #DISK}, runs fio with {@code args} and shuts it down. */
    public FioReport fio(MachineConfig config, List<String> args) {
        try (GuestMachine machine = engine.boot(disks.port(DISK), virtqueues, config)) {
            return FioRunner.run(machine, DISK, Fio.parse(args).jobs());
        }
    }

    /** fio's normal output of {@code report}, for messages. */
    public static String format(FioReport report) {
        return Fio.format(report, FioInvocation.OutputFormat.NORMAL);
    }

    /**
     * Checks a write-and-verify report: no job failed, every job wrote and read back each block it wrote (fio's
     * verify), under {@code rule}. Returns the I/Os counted.
     */
    public static long checkVerified(FioReport report, Rule rule, String what) {
        ContractViolation.check(!report.failed(), rule, what + ": fio failed:\n" + format(report));
        long ios = 0;
        for (JobResult job : report.jobs()) {
            ContractViolation.check(job.error() == 0, rule, what + ": job " + job.name() + " errors "
                    + job.errors() + "\n" + format(report));
            ContractViolation.check(job.write().ios() > 0 && job.write().ios() == job.read().ios(), rule,
                    what + ": job " + job.name() + " wrote " + job.write().ios() + " blocks and verified "
                    + job.read().ios() + "\n" + format(report));
            ios += job.write().ios() + job.read().ios();
        }
        return ios;
    }

    @Override
    public void close() {
        disks.close();
    }
}
