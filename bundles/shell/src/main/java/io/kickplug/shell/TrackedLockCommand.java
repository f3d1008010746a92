package io.kickplug.shell;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.TrackedLockKind;
import java.util.Arrays;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code kp:tracked-lock NAME KIND}: switches a disk's tracked-requests lock while it runs. A name with '-' is no
 * Java method name, so the command is {@code _main}, which Gogo runtime 1.1.6's {@code Reflective} calls for any
 * function name, passing that name first.
 */
@Component(service = TrackedLockCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=tracked-lock",
})
public final class TrackedLockCommand extends DiskSettingCommand<TrackedLockKind> {

    static final String USAGE = "usage: kp:tracked-lock [--json] NAME yielding|mutex|sharded";

    @Activate
    public TrackedLockCommand(@Reference(name = "diskManager") DiskManager disks) {
        super(disks, USAGE, TrackedLockKind::parse);
    }

    /**
     * {@code kp:tracked-lock}.
     *
     * @param operands the function name Gogo passes first, then the command's operands
     */
    @Descriptor("switch a disk's tracked-requests lock while it runs; requests in flight finish under the lock "
            + "they started with")
    public String _main(
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("NAME yielding|mutex|sharded: the disk, and its new lock (yielding: a hand-off mutex like "
                    + "QEMU's CoMutex; mutex: a plain mutex; sharded: one list and lock per I/O thread)")
            String... operands) {
        return run(json, operands.length == 0 ? operands : Arrays.copyOfRange(operands, 1, operands.length));
    }

    @Override
    String apply(DiskManager disks, String disk, TrackedLockKind kind, boolean json) {
        DiskInfo info = disks.setTrackedLock(disk, kind);
        return json ? JsonShapes.trackedLock(info)
                : info.name() + ": tracked-requests lock is now " + info.trackedLock().label();
    }
}
