package io.kickplug.shell;

import io.kickplug.api.guest.GuestControl;
import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.lockstat.LockStats;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Gogo commands of scope {@code kp} for the simulated guest's machine: {@code kp:guest} (vCPUs, exit and
 * injection latencies, kick policy) and {@code kp:lockstat}. Thin adapters over {@link GuestControl} and
 * {@link LockStats}.
 */
@Component(service = GuestCommands.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=guest",
    "osgi.command.function=lockstat",
})
public final class GuestCommands {

    private static final String UNSET = "";
    private static final String NANOS = "nanoseconds, 0 or more";

    @Reference(name = "guestControl", cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    private volatile GuestControl control;

    @Reference(name = "lockStats", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile LockStats lockStats;

    public GuestCommands() {
    }

    /** For tests and for callers outside DS. */
    GuestCommands(GuestControl control, LockStats lockStats) {
        this.control = control;
        this.lockStats = lockStats;
    }

    @Descriptor("show the simulated guest's machine (vCPUs, exit and injection latency, kick policy, poll "
            + "queues); "
            + "with options, change it for the next run")
    public String guest(
            @Descriptor("vCPU threads")
            @Parameter(names = "--vcpus", absentValue = UNSET) String vcpus,
            @Descriptor("cost of one notify (VM exit) in ns, busy-waited on the notifying vCPU")
            @Parameter(names = "--exit-ns", absentValue = UNSET) String exitNs,
            @Descriptor("cost of one interrupt in ns, busy-waited on the receiving vCPU")
            @Parameter(names = "--inject-ns", absentValue = UNSET) String injectNs,
            @Descriptor("kick policy name, e.g. under-lock or outside-lock")
            @Parameter(names = "--kick-policy", absentValue = UNSET) String kickPolicy,
            @Descriptor("queues without interrupts for hipri (polled) I/O, Linux's poll_queues; 0 for none")
            @Parameter(names = "--poll-queues", absentValue = UNSET) String pollQueues,
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json) {
        GuestControl c = OptionalServices.require(control, "simulated guest", "io.kickplug.guest");
        GuestSettings s = c.settings();
        boolean change = !vcpus.isEmpty() || !exitNs.isEmpty() || !injectNs.isEmpty() || !kickPolicy.isEmpty()
                || !pollQueues.isEmpty();
        if (change) {
            s = c.configure(new GuestSettings(vcpus.isEmpty() ? s.vcpus() : Args.positiveInt("--vcpus", vcpus),
                    exitNs.isEmpty() ? s.exitLatencyNs() : Args.inRange("--exit-ns", exitNs, 0, Long.MAX_VALUE, NANOS),
                    injectNs.isEmpty() ? s.injectLatencyNs() : Args.inRange("--inject-ns", injectNs, 0, Long.MAX_VALUE, NANOS),
                    kickPolicy.isEmpty() ? s.kickPolicy() : kickPolicy.trim(),
                    pollQueues.isEmpty() ? s.pollQueues() : Args.nonNegativeInt("--poll-queues", pollQueues, "an integer, 0 or more")));
        }
        if (json) {
            return JsonShapes.guest(s, c.kickPolicies());
        }
        String text = LockStatTable.settings(s, c.kickPolicies());
        return change ? text + System.lineSeparator() + "(applies to the next run)" : text;
    }

    @Descriptor("lock statistics of every instrumented lock, in /proc/lock_stat's columns")
    public String lockstat(
            @Descriptor("zero the statistics instead of printing them")
            @Parameter(names = "--reset", presentValue = "true", absentValue = "false") boolean reset,
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json) {
        LockStats stats = OptionalServices.require(lockStats, "lock statistics", "io.kickplug.guest");
        if (reset) {
            stats.reset();
            return json ? JsonOut.write(java.util.Map.of("reset", true)) : "lock statistics reset";
        }
        return json ? JsonShapes.lockstat(stats.rows()) : LockStatTable.format(stats.rows());
    }
}
