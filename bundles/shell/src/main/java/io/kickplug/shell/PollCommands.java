package io.kickplug.shell;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.poll.PollCounters;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollPolicy;
import io.kickplug.api.poll.PollStatus;
import java.util.Locale;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * {@code kp:poll DISK [on|off] [--poll-max-ns N]}: device-side polling of a disk's queues (QEMU's IOThread
 * adaptive polling), a thin adapter over {@link DiskManager#setPolling}. The request is kept while the
 * poll-extension bundle is stopped and applies when its policy returns.
 */
@Component(service = PollCommands.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=poll",
})
public final class PollCommands {

    private static final String UNSET = "";

    private final DiskManager disks;

    /**
     * Optional: the policy the disk manager binds (the poll-extension bundle). Seeing it here tells "no poll
     * policy" from "one the disk manager has not taken up yet"; it also tells the launcher that a daemon whose
     * statements use kp:poll starts the poll-extension bundle before them.
     */
    @Reference(name = "pollPolicy", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY, target = "(" + PollPolicy.PROPERTY + "=" + PollPolicy.ADAPTIVE + ")")
    private volatile PollPolicy policy;

    @Activate
    public PollCommands(@Reference(name = "diskManager") DiskManager disks) {
        this.disks = disks;
    }

    /** For tests and for callers outside DS. */
    PollCommands(DiskManager disks, PollPolicy policy) {
        this.disks = disks;
        this.policy = policy;
    }

    @Descriptor("show device-side polling of a disk: settings and per-queue hits, misses and poll time")
    public String poll(
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("disk name") String disk) {
        PollStatus status = disks.pollStatus(disk);
        return json ? JsonShapes.poll(status) : format(status);
    }

    @Descriptor("turn device-side polling of a disk's queues on or off: the I/O threads poll the available "
            + "rings with the driver's notifications off, in adaptive windows up to poll-max-ns")
    public String poll(
            @Descriptor("longest poll window in ns (QEMU's poll-max-ns, default 32768)")
            @Parameter(names = "--poll-max-ns", absentValue = UNSET) String maxNs,
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("disk name") String disk,
            @Descriptor("on|off: polling on or off") String mode) {
        boolean on = switch (mode.trim().toLowerCase(Locale.ROOT)) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException("invalid mode '" + mode + "': expected on or off");
        };
        PollParams params = maxNs.isEmpty() ? null : PollParams.defaults().withMaxNs(Args.inRange("--poll-max-ns", maxNs, 0,
                PollParams.LIMIT_MAX_NS, "nanoseconds in 0.." + PollParams.LIMIT_MAX_NS));
        PollStatus status = disks.setPolling(disk, on, params);
        if (status.requested() && !status.active() && status.params().maxNs() > 0 && policy != null) {
            status = BoundedWait.until(() -> disks.pollStatus(disk), PollStatus::active, BoundedWait.TAKE_UP_MILLIS,
                    "the disk manager to take up the poll policy");
        }
        return json ? JsonShapes.poll(status) : format(status);
    }

    static String format(PollStatus s) {
        StringBuilder b = new StringBuilder();
        b.append(s.disk()).append(": polling ").append(s.requested() ? "on" : "off");
        if (s.requested()) {
            b.append(s.active() ? " (active)" : s.params().maxNs() == 0 ? " (inactive: poll-max-ns is 0)"
                    : " (inactive: no poll policy; start the io.kickplug.poll bundle)");
        }
        b.append(", poll-max-ns ").append(s.params().maxNs());
        b.append(String.format("%n%-6s %12s %12s %12s", "queue", "hits", "misses", "poll-ms"));
        for (int q = 0; q < s.queues().size(); q++) {
            PollCounters c = s.queues().get(q);
            b.append(String.format(Locale.ROOT, "%n%-6d %12d %12d %12.3f", q, c.hits(), c.misses(),
                    c.pollNanos() / 1e6));
        }
        return b.toString();
    }
}
