package io.kickplug.throttle;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendFilter;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.command.OptionTable;
import io.kickplug.api.control.ThrottleControl;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * The throttle filter as a service (every disk attached while it is bound goes through it, unlimited until
 * {@code kp:throttle} sets limits) and the {@code kp:throttle} command. {@code kp:throttle} writes the disk's
 * group and limits into the disk's configuration ({@link DiskConfigThrottleStore}), and a disk's first wrap
 * applies them again, so they outlive this bundle and the runtime. When the bundle stops, the disk manager takes
 * the filter out of the running disks' filter chains (retiring the wrappers: waiting requests go on at once) and
 * puts it back in when the bundle returns; the disks are not reset.
 */
@Component(service = {BackendFilter.class, ThrottleComponent.class, ThrottleControl.class}, property = {
    BackendFilter.PROPERTY_NAME + "=throttle",
    "osgi.command.scope=kp",
    "osgi.command.function=throttle"})
public final class ThrottleComponent implements BackendFilter, ThrottleControl {

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kickplug-throttle");
        t.setDaemon(true);
        return t;
    });
    @Reference(name = "configurationAdmin", cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC)
    private volatile ConfigurationAdmin configAdmin;
    /** Writes the limits into the disks' configurations, one write at a time with its own settings there. */
    @Reference(name = "diskManager", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile DiskManager diskManager;
    /** Limits and groups are kept in the disks' configurations, so they outlive this bundle and the runtime. */
    private final Throttles throttles = new Throttles(System::nanoTime, timer,
            new DiskConfigThrottleStore(() -> configAdmin, () -> diskManager));

    @Override
    public String name() {
        return "throttle";
    }

    @Override
    public AsyncBlockBackend wrap(String disk, AsyncBlockBackend backend) {
        return throttles.wrap(disk, backend);
    }

    @Override
    public Map<String, Long> stats(String disk) {
        return throttles.stats(disk);
    }

    /** kp:throttle's options after the disk, for the command reference: {@link Throttles#OPTIONS}. */
    public static final OptionTable OPTIONS = Throttles.OPTIONS;

    /**
     * kp:throttle NAME [--group G] [--iops N] [--iops-read N] [--iops-write N] [--bps N] [--bps-read N]
     * [--bps-write N] (each also -max and -max-length) [--clear]: changes the limits at once, without a reset.
     */
    @Descriptor("show or change a disk's throttle limits (QEMU's throttle groups: iops and bps, total or per "
            + "direction, each with bursts); a change applies at once, without a reset")
    public String throttle(@Descriptor("disk name") String disk,
            @Descriptor("[options]: --group G, --clear, and limits such as --iops N or --bps-read-max N, each "
                    + "also --NAME=VALUE") String... args) {
        return throttles.configure(disk, Arrays.asList(args));
    }

    /** QMP's throttle nodes and throttle-group objects: the group and its limits, the others cleared. */
    @Override
    public void configure(String disk, String group, Map<String, Long> limits) {
        throttles.configure(disk, Throttles.arguments(group, limits));
    }

    @Deactivate
    void deactivate() {
        throttles.passThroughAll();
        timer.shutdown();
    }
}
