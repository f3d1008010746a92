package io.kickplug.shell;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.virtio.RingFormat;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code kp:ring NAME split|packed}: swaps the virtqueue format a running disk offers (the device is reset, the
 * simulated guest re-probes and negotiates the new format). Thin: {@link DiskManager#setRing} does the work.
 */
@Component(service = RingCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=ring",
})
public final class RingCommand extends DiskSettingCommand<RingFormat> {

    static final String USAGE = "usage: kp:ring [--json] NAME split|packed";

    @Activate
    public RingCommand(@Reference(name = "diskManager") DiskManager disks) {
        super(disks, USAGE, RingFormat::parse);
    }

    @Descriptor("swap the virtqueue format a running disk offers: the device is reset and the guest re-probes and "
            + "negotiates the new format")
    public String ring(
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("NAME split|packed: the disk, and the format to offer (VIRTIO_F_RING_PACKED for packed)")
            String... operands) {
        return run(json, operands);
    }

    @Override
    String apply(DiskManager disks, String disk, RingFormat format, boolean json) {
        DiskInfo info = disks.setRing(disk, format);
        return json ? JsonShapes.ring(info)
                : info.name() + ": " + info.ring().id() + " rings from now on (the device was reset)";
    }
}
