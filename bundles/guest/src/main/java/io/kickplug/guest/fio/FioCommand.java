package io.kickplug.guest.fio;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.engine.GuestEngine;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Gogo command {@code kp:fio}: runs fio jobs in the simulated guest on an attached disk. It lives in the
 * guest bundle because the runner is this bundle's private code; {@code KpCommands} in the shell bundle
 * holds the other {@code kp:} commands.
 */
@Component(service = FioCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=fio",
})
public final class FioCommand {

    private final DiskManager disks;
    private final VirtqueueFactory virtqueues;
    private final GuestEngine engine;
    private final Set<String> busy = ConcurrentHashMap.newKeySet();

    @Activate
    public FioCommand(@Reference(name = "diskManager") DiskManager disks,
            @Reference(name = "virtqueueFactory") VirtqueueFactory virtqueues,
            @Reference(name = "guestEngine") GuestEngine engine) {
        this.disks = disks;
        this.virtqueues = virtqueues;
        this.engine = engine;
    }

    @Descriptor("run fio jobs in the simulated guest on a disk: kp:fio <disk> <jobfile> or kp:fio <disk> --rw=randread"
            + " --bs=4k ... [--output-format=json]; filename=/dev/vd* means the disk")
    public String fio(@Descriptor("disk name") String disk,
            @Descriptor("a fio job file, or fio options (--name=, --rw=, --bs=, --iodepth=, ...), and"
                    + " --output-format=normal|json") String... args) {
        FioInvocation invocation = Fio.parse(Arrays.asList(args));
        GuestPort port = disks.port(disk);
        if (!busy.add(disk)) {
            throw new IllegalStateException("disk '" + disk + "' is busy with another kp:fio run");
        }
        try {
            return Fio.run(engine, port, virtqueues, disk, invocation, () -> disks.ioThreadCpuNanos(disk));
        } finally {
            busy.remove(disk);
        }
    }
}
