package io.kickplug.shell;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.virtio.RingFormat;
import java.util.List;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Function;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code kp:ring NAME split|packed}: swaps the virtqueue format a running disk offers (the device is reset, the
 * simulated guest re-probes and negotiates the new format). Thin: {@link DiskManager#setRing} does the work.
 */
@Component(service = Function.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=ring",
})
public final class RingCommand implements Function {

    static final String USAGE = "usage: kp:ring [--json] NAME split|packed";

    private final DiskManager disks;

    @Activate
    public RingCommand(@Reference(name = "diskManager") DiskManager disks) {
        this.disks = disks;
    }

    @Override
    public Object execute(CommandSession session, List<Object> arguments) {
        return run(arguments);
    }

    /** The command without Gogo: the disk and the ring format. */
    String run(List<Object> arguments) {
        boolean json = !arguments.isEmpty() && "--json".equals(String.valueOf(arguments.get(0)));
        List<Object> args = json ? arguments.subList(1, arguments.size()) : arguments;
        if (args.size() != 2 || args.get(0) == null) {
            throw new IllegalArgumentException(USAGE);
        }
        RingFormat format;
        try {
            format = RingFormat.parse(String.valueOf(args.get(1)));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + "; " + USAGE);
        }
        DiskInfo info = disks.setRing(args.get(0).toString(), format);
        return json ? "{\"disk\":\"" + info.name() + "\",\"ring\":\"" + info.ring().id() + "\"}"
                : info.name() + ": " + info.ring().id() + " rings from now on (the device was reset)";
    }
}
