package io.kickplug.shell;

import io.kickplug.api.guest.GuestWorkloads;
import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * {@code kp:io}: a write, read-back and verify pass of the simulated guest on a disk, a thin adapter over
 * {@link GuestWorkloads}. A component of its own, apart from the disk commands ({@link KpCommands}): its
 * reference to {@link GuestWorkloads} is what tells the launcher that a daemon whose statements use kp:io must
 * start the guest bundle before them, while one that only attaches and exports disks need not.
 */
@Component(service = IoCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=io",
})
public final class IoCommand {

    /** Optional: the command stays while the guest bundle is away, and says so. */
    @Reference(name = "guestWorkloads", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile GuestWorkloads workloads;

    public IoCommand() {
    }

    /** For tests and for callers outside DS. */
    IoCommand(GuestWorkloads workloads) {
        this.workloads = workloads;
    }

    @Descriptor("run the simulated guest on a disk: write a pattern, read it back and verify it")
    public String io(
            @Descriptor("bytes per request, a multiple of 512 (default 4K)")
            @Parameter(names = "--bs", absentValue = "4K") String blockSize,
            @Descriptor("requests in flight (default 32)")
            @Parameter(names = "--depth", absentValue = "32") String depth,
            @Descriptor("bytes to write and read from offset 0 (default 0: the whole disk)")
            @Parameter(names = "--size", absentValue = "0") String size,
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("disk name") String name) {
        IoPassOptions options = new IoPassOptions(Args.intSize("--bs", blockSize), Args.positiveInt("--depth", depth),
                Args.size("--size", size));
        GuestWorkloads guest = OptionalServices.require(workloads, "simulated guest", "io.kickplug.guest");
        IoPassResult result = guest.writeReadVerify(name, options);
        if (result.mismatches() > 0) {
            throw new IllegalStateException(IoReport.mismatchError(result));
        }
        return json ? JsonShapes.io(options, result) : IoReport.format(options, result);
    }
}
