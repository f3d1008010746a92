package io.kickplug.guest.fio;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.command.OptionTable;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.engine.DeviceSource;
import io.kickplug.guest.engine.GuestEngine;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Gogo command {@code kp:fio}: runs fio jobs in the simulated guest on an attached disk. It lives in the
 * guest bundle because the runner is this bundle's private code; the shell bundle holds the other
 * {@code kp:} commands.
 *
 * <p>The disk manager and the virtqueue factory are bound dynamically: when a bundle serving the disk is
 * updated during a run, the guest sees the device go, and finds it again here when it returns (hot-swap).
 * A run that starts while a configured disk is being rebuilt waits for it (bounded).
 */
@Component(service = FioCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=fio",
})
public final class FioCommand {

    /** How long a run waits for a configured disk that is being rebuilt, or for the disk manager. */
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** How long a disk that no configuration names may take to appear (a manager being replaced). */
    private static final long UNKNOWN_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    @Reference(name = "diskManager", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile DiskManager disks;
    @Reference(name = "virtqueueFactory", cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY,
            target = "(!(" + VirtqueueFactory.RING_PROPERTY + "=packed))")
    private volatile VirtqueueFactory virtqueues;
    /** The packed ring bundle's factory, when it is there (the guest then accepts VIRTIO_F_RING_PACKED). */
    @Reference(name = "packedVirtqueueFactory", cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY,
            target = "(" + VirtqueueFactory.RING_PROPERTY + "=packed)")
    private volatile VirtqueueFactory packedVirtqueues;
    private final GuestEngine engine;
    private final Set<String> busy = ConcurrentHashMap.newKeySet();

    @Activate
    public FioCommand(@Reference(name = "guestEngine") GuestEngine engine) {
        this.engine = engine;
    }

    /** For tests and callers outside DS. */
    public FioCommand(DiskManager disks, VirtqueueFactory virtqueues, GuestEngine engine) {
        this.disks = disks;
        this.virtqueues = virtqueues;
        this.engine = engine;
    }

    /** kp:fio's own options, then the job options: their parsers check them, the command reference lists them. */
    public static final List<OptionTable> OPTIONS = List.of(FioInvocation.TABLE, JobOptions.TABLE);

    @Descriptor("run fio jobs in the simulated guest on a disk: kp:fio <disk> <jobfile> or kp:fio <disk> --rw=randread"
            + " --bs=4k ... [--output-format=json]; filename=/dev/vd* means the disk")
    public String fio(@Descriptor("disk name") String disk,
            @Descriptor("JOBFILE | --KEY=VALUE...: a fio job file, or fio options (--name=, --rw=, --bs=, "
                    + "--iodepth=, ...), and --output-format=normal|json") String... args) {
        FioInvocation invocation = Fio.parse(Arrays.asList(args));
        GuestPort port = awaitPort(disk);
        VirtqueueFactory rings = awaitRings();
        if (!busy.add(disk)) {
            throw new IllegalStateException("disk '" + disk + "' is busy with another kp:fio run");
        }
        try {
            return Fio.run(engine, port, rings, disk, invocation, () -> cpu(disk), source(disk));
        } finally {
            busy.remove(disk);
        }
    }

    private long cpu(String disk) {
        DiskManager dm = disks;
        try {
            return dm == null ? -1 : dm.ioThreadCpuNanos(disk);
        } catch (RuntimeException e) {
            return -1; // the disk is being rebuilt
        }
    }

    /** The disk's current port and rings, as a guest that lost its device looks for them. */
    DeviceSource source(String disk) {
        return new DeviceSource() {
            @Override
            public GuestPort port() {
                DiskManager dm = disks;
                if (dm == null) {
                    return null;
                }
                try {
                    return dm.port(disk);
                } catch (RuntimeException e) {
                    return null; // not attached (yet)
                }
            }

            @Override
            public VirtqueueFactory virtqueues() {
                return virtqueues;
            }
        };
    }

    /** The virtqueue factory; waits (bounded) while its bundle is being updated. */
    private VirtqueueFactory awaitRings() {
        long deadline = System.nanoTime() + WAIT_NANOS;
        VirtqueueFactory rings;
        while ((rings = virtqueues) == null) {
            if (System.nanoTime() - deadline >= 0) {
                throw new IllegalStateException("no virtqueue factory: the io.kickplug.virtqueue.split bundle is not "
                        + "active");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        return RingSelector.of(rings, packedVirtqueues);
    }

    /**
     * The disk's port; waits (bounded) while the disk manager is away or the disk is configured but not yet
     * attached, as right after a bundle update.
     */
    private GuestPort awaitPort(String disk) {
        long start = System.nanoTime();
        long deadline = start + WAIT_NANOS;
        while (true) {
            DiskManager dm = disks;
            RuntimeException last;
            if (dm != null) {
                try {
                    return dm.port(disk);
                } catch (RuntimeException e) {
                    last = e;
                    boolean coming = false;
                    try {
                        coming = dm.configuredDisks().contains(disk);
                    } catch (RuntimeException goingAway) {
                        coming = true;
                    }
                    // A manager on its way out may no longer see the configurations: a short grace.
                    if (!coming && System.nanoTime() - start >= UNKNOWN_GRACE_NANOS) {
                        throw e;
                    }
                }
            } else {
                last = new IllegalStateException("the disk manager is not available (bundle io.kickplug.blk, or the "
                        + "transport or virtqueue bundle it needs, is not active)");
            }
            if (System.nanoTime() - deadline >= 0) {
                throw last;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }
}
