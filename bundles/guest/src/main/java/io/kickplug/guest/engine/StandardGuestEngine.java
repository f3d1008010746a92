package io.kickplug.guest.engine;

import io.kickplug.api.guest.DeviceRecovery;
import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.kick.KickPolicies;
import io.kickplug.guest.lock.LockRegistry;
import java.util.List;
import java.util.Objects;

/**
 * The {@link GuestEngine}: kick policies by name, one lock registry for every machine it boots, and the
 * runtime settings of {@code kp:guest}.
 */
public final class StandardGuestEngine implements GuestEngine {

    private final KickPolicies policies;
    private final LockRegistry locks;
    private volatile GuestSettings settings;
    private final BoundedLog recoveries = new BoundedLog();

    /** The latest recoveries; thread-safe. */
    private static final class BoundedLog extends java.util.ArrayDeque<DeviceRecovery> {
        private static final long serialVersionUID = 1L;

        @Override
        public synchronized boolean add(DeviceRecovery r) {
            if (size() >= 1000) {
                removeFirst();
            }
            return super.add(r);
        }
    }

    public StandardGuestEngine(KickPolicies policies, LockRegistry locks) {
        this.policies = Objects.requireNonNull(policies, "policies");
        this.locks = Objects.requireNonNull(locks, "locks");
        MachineConfig d = MachineConfig.defaults("guest");
        this.settings = new GuestSettings(d.vcpus(), d.exitLatencyNs(), d.injectLatencyNs(), d.kickPolicy(),
                d.pollQueues());
    }

    /** The built-in policies and a fresh lock registry: for use without OSGi. */
    public static StandardGuestEngine standalone() {
        return new StandardGuestEngine(KickPolicies.builtIn(), new LockRegistry());
    }

    public KickPolicies policies() {
        return policies;
    }

    public LockRegistry locks() {
        return locks;
    }

    public GuestSettings settings() {
        return settings;
    }

    /**
     * Replaces the settings after checking them (range of each value; the kick policy must exist now).
     *
     * @throws IllegalArgumentException naming the bad value
     */
    public GuestSettings configure(GuestSettings next) {
        Objects.requireNonNull(next, "settings");
        // The record's checks give the one-line messages for the numbers.
        MachineConfig.defaults("guest").withVcpus(next.vcpus())
                .withLatencies(next.exitLatencyNs(), next.injectLatencyNs()).withKickPolicy(next.kickPolicy())
                .withPollQueues(next.pollQueues());
        policies.get(next.kickPolicy());
        settings = next;
        return next;
    }

    @Override
    public MachineConfig defaults(String name) {
        GuestSettings s = settings;
        return MachineConfig.defaults(name).withVcpus(s.vcpus()).withLatencies(s.exitLatencyNs(), s.injectLatencyNs())
                .withKickPolicy(s.kickPolicy()).withPollQueues(s.pollQueues());
    }

    @Override
    public GuestMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config) {
        Objects.requireNonNull(port, "port");
        Objects.requireNonNull(factory, "factory");
        Objects.requireNonNull(config, "config");
        return VcpuMachine.boot(port, factory, config, policies.get(config.kickPolicy()), locks, null, null);
    }

    @Override
    public GuestMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config, DeviceSource source) {
        Objects.requireNonNull(port, "port");
        Objects.requireNonNull(factory, "factory");
        Objects.requireNonNull(config, "config");
        return VcpuMachine.boot(port, factory, config, policies.get(config.kickPolicy()), locks, source,
                recoveries::add);
    }

    @Override
    public GuestMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config, VirtualTime time) {
        Objects.requireNonNull(port, "port");
        Objects.requireNonNull(factory, "factory");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(time, "time");
        return VcpuMachine.boot(port, factory, config, policies.get(config.kickPolicy()), locks, null, null, time);
    }

    /** The device removals and returns the machines booted here went through (the latest 1000). */
    public List<DeviceRecovery> recoveries(long sinceNanos) {
        synchronized (recoveries) {
            return recoveries.stream().filter(r -> r.removedAtNanos() - sinceNanos >= 0).toList();
        }
    }
}
