package io.kickplug.throttle;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendFilter;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;

/**
 * The throttle filter as a service (every disk attached while it is bound goes through it, unlimited until
 * {@code kp:throttle} sets limits) and the {@code kp:throttle} command. When the bundle stops, the disks' wrappers
 * let everything through (waiting requests at once), so no request waits on a timer that is gone.
 */
@Component(service = {BackendFilter.class, ThrottleComponent.class}, property = {
    BackendFilter.PROPERTY_NAME + "=throttle",
    "osgi.command.scope=kp",
    "osgi.command.function=throttle"})
public final class ThrottleComponent implements BackendFilter {

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kickplug-throttle");
        t.setDaemon(true);
        return t;
    });
    private final Throttles throttles = new Throttles(System::nanoTime, timer);

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

    /**
     * kp:throttle NAME [--group G] [--iops N] [--iops-read N] [--iops-write N] [--bps N] [--bps-read N]
     * [--bps-write N] (each also -max and -max-length) [--clear]: changes the limits at once, without a reset.
     */
    public String throttle(String disk, String... args) {
        return throttles.configure(disk, Arrays.asList(args));
    }

    @Deactivate
    void deactivate() {
        throttles.passThroughAll();
        timer.shutdown();
    }
}
