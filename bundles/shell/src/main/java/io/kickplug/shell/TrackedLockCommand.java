package io.kickplug.shell;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.TrackedLockKind;
import java.util.List;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Function;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code kp:tracked-lock NAME KIND}: switches a disk's tracked-requests lock while it runs. A Gogo
 * {@link Function} because Gogo maps a command to a Java method by name, and a name with '-' is none.
 */
@Component(service = Function.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=tracked-lock",
})
public final class TrackedLockCommand implements Function {

    static final String USAGE = "usage: kp:tracked-lock [--json] NAME yielding|mutex|sharded";

    private final DiskManager disks;

    @Activate
    public TrackedLockCommand(@Reference(name = "diskManager") DiskManager disks) {
        this.disks = disks;
    }

    @Override
    public Object execute(CommandSession session, List<Object> arguments) {
        return run(arguments);
    }

    /** The command without Gogo: two arguments, the disk and the lock kind. */
    String run(List<Object> arguments) {
        boolean json = !arguments.isEmpty() && "--json".equals(String.valueOf(arguments.get(0)));
        if (json) {
            arguments = arguments.subList(1, arguments.size());
        }
        if (arguments.size() != 2 || arguments.get(0) == null) {
            throw new IllegalArgumentException(USAGE);
        }
        TrackedLockKind kind;
        try {
            kind = TrackedLockKind.parse(String.valueOf(arguments.get(1)));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + "; " + USAGE);
        }
        DiskInfo info = disks.setTrackedLock(arguments.get(0).toString(), kind);
        return json ? JsonShapes.trackedLock(info)
                : info.name() + ": tracked-requests lock is now " + info.trackedLock().label();
    }
}
