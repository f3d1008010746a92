package io.kickplug.guest;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.guest.GuestWorkloads;
import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.engine.GuestEngine;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.guest.virtio.DriverConfig;
import io.kickplug.guest.workload.WriteReadVerifyPass;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.component.annotations.ReferenceCardinality;

/**
 * The simulated guest as a service: each workload boots a machine of the guest engine on the disk's
 * {@link GuestPort} and runs its jobs there (the caller waits), one pass at a time per disk.
 */
@Component(service = GuestWorkloads.class)
public final class GuestWorkloadsComponent implements GuestWorkloads {

    private final DiskManager disks;
    private final VirtqueueFactory virtqueues;
    private final GuestEngine engine;
    private final Set<String> busy = ConcurrentHashMap.newKeySet();
    /** Random per activation so that a persistent disk never holds this pass's pattern from an earlier life. */
    private final AtomicLong seeds = new AtomicLong(new SplittableRandom().nextLong());

    @Activate
    public GuestWorkloadsComponent(@Reference(name = "diskManager") DiskManager disks,
            @Reference(name = "virtqueueFactory", target = "(!(" + VirtqueueFactory.RING_PROPERTY + "=packed))") VirtqueueFactory virtqueues,
            @Reference(name = "packedVirtqueueFactory", target = "(" + VirtqueueFactory.RING_PROPERTY + "=packed)",
                    cardinality = ReferenceCardinality.OPTIONAL, policyOption = ReferencePolicyOption.GREEDY)
            VirtqueueFactory packed,
            @Reference(name = "guestEngine") GuestEngine engine) {
        this.disks = disks;
        this.virtqueues = RingSelector.of(virtqueues, packed);
        this.engine = engine;
    }

    /** With an engine of its own (the built-in kick policies): for use without OSGi. */
    public GuestWorkloadsComponent(DiskManager disks, VirtqueueFactory virtqueues) {
        this(disks, virtqueues, null, StandardGuestEngine.standalone());
    }

    @Override
    public IoPassResult writeReadVerify(String disk, IoPassOptions options) {
        Objects.requireNonNull(disk, "disk");
        IoPassOptions opts = options == null ? IoPassOptions.defaults() : options;
        WriteReadVerifyPass.validate(opts);
        GuestPort port = disks.port(disk);
        if (!busy.add(disk)) {
            throw new IllegalStateException("disk '" + disk + "' is busy with another guest workload");
        }
        try {
            // Each run gets its own seed, so a read can never pass by finding an earlier run's data.
            long seed = seeds.incrementAndGet();
            return new WriteReadVerifyPass(disk, port, virtqueues, engine, opts, seed, DriverConfig.DEFAULT_TIMEOUT)
                    .run();
        } finally {
            busy.remove(disk);
        }
    }
}
