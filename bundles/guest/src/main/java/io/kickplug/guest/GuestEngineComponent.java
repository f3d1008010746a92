package io.kickplug.guest;

import io.kickplug.api.guest.DeviceRecoveries;
import io.kickplug.api.guest.DeviceRecovery;
import io.kickplug.api.guest.GuestControl;
import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.guest.KickPolicy;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.lockstat.LockStatSource;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.engine.GuestEngine;
import io.kickplug.guest.engine.GuestMachine;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.guest.kick.KickPolicies;
import io.kickplug.guest.lock.LockRegistry;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * The simulated guest's engine as services: {@link GuestEngine} for the bundle's workloads, {@link GuestControl}
 * for {@code kp:guest}, and the vq locks' statistics as a {@link LockStatSource}. Kick policies are every
 * bound {@link KickPolicy} service, by its {@value KickPolicy#PROPERTY} property.
 */
@Component(service = {GuestEngine.class, GuestControl.class, LockStatSource.class, DeviceRecoveries.class})
public final class GuestEngineComponent implements GuestEngine, GuestControl, LockStatSource, DeviceRecoveries {

    private final KickPolicies policies = new KickPolicies();
    private final LockRegistry locks = new LockRegistry();
    private final StandardGuestEngine engine = new StandardGuestEngine(policies, locks);

    @Reference(name = "kickPolicy", cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            unbind = "removeKickPolicy")
    void addKickPolicy(KickPolicy policy, Map<String, Object> properties) {
        Object name = properties.get(KickPolicy.PROPERTY);
        if (name instanceof String n && !n.isBlank()) {
            policies.add(n, policy);
        }
    }

    void removeKickPolicy(KickPolicy policy, Map<String, Object> properties) {
        Object name = properties.get(KickPolicy.PROPERTY);
        if (name instanceof String n) {
            policies.remove(n, policy);
        }
    }

    @Override
    public MachineConfig defaults(String name) {
        return engine.defaults(name);
    }

    @Override
    public GuestMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config) {
        return engine.boot(port, factory, config);
    }

    @Override
    public GuestMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config,
            io.kickplug.guest.engine.DeviceSource source) {
        return engine.boot(port, factory, config, source);
    }

    @Override
    public GuestMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config,
            io.kickplug.guest.engine.VirtualTime time) {
        return engine.boot(port, factory, config, time);
    }

    @Override
    public List<DeviceRecovery> since(long sinceNanos) {
        return engine.recoveries(sinceNanos);
    }

    @Override
    public GuestSettings settings() {
        return engine.settings();
    }

    @Override
    public GuestSettings configure(GuestSettings settings) {
        return engine.configure(settings);
    }

    @Override
    public List<String> kickPolicies() {
        return policies.names();
    }

    @Override
    public List<LockStatRow> lockStats() {
        return locks.rows();
    }

    @Override
    public void resetLockStats() {
        locks.reset();
    }
}
