package io.kickplug.shell;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.TrackedLockKind;
import org.apache.felix.service.command.Function;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code kp:tracked-lock NAME KIND}: switches a disk's tracked-requests lock while it runs. */
@Component(service = Function.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=tracked-lock",
})
public final class TrackedLockCommand extends DiskSettingCommand<TrackedLockKind> {

    static final String USAGE = "usage: kp:tracked-lock [--json] NAME yielding|mutex|sharded";

    @Activate
    public TrackedLockCommand(@Reference(name = "diskManager") DiskManager disks) {
        super(disks, USAGE, TrackedLockKind::parse);
    }

    @Override
    String apply(DiskManager disks, String disk, TrackedLockKind kind, boolean json) {
        DiskInfo info = disks.setTrackedLock(disk, kind);
        return json ? JsonShapes.trackedLock(info)
                : info.name() + ": tracked-requests lock is now " + info.trackedLock().label();
    }
}
