package io.kickplug.guest.engine;

import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.VirtqueueFactory;

/**
 * Boots {@link GuestMachine}s: resolves the kick policy by name and reports every machine's locks into
 * the shared lock statistics. Available in the guest bundle as a DS service of this type.
 */
public interface GuestEngine {

    /**
     * The settings {@code kp:guest} last set (vCPUs, latencies, kick policy) on top of
     * {@link MachineConfig#defaults}, named {@code name}.
     */
    MachineConfig defaults(String name);

    /**
     * Initializes the device behind {@code port} (VIRTIO 1.2 section 3.1.1) and starts the vCPU threads.
     *
     * @throws IllegalArgumentException when no kick policy has the configured name
     * @throws io.kickplug.guest.driver.GuestDriverException when the device cannot be driven
     */
    GuestMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config);

    /**
     * As {@link #boot(GuestPort, VirtqueueFactory, MachineConfig)}, for a guest that survives its device going
     * away: after a removal it finds the disk again through {@code source}, re-probes and resubmits.
     */
    default GuestMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config, DeviceSource source) {
        return boot(port, factory, config);
    }

    /**
     * As {@link #boot(GuestPort, VirtqueueFactory, MachineConfig)}, with the vCPUs in virtual time {@code time}:
     * the device behind {@code port} must run on I/O threads of the same time (its disk attached with
     * {@code time} as I/O thread factory). Closing the machine ends the virtual time ({@link VirtualTime#shutdown}).
     */
    default GuestMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config, VirtualTime time) {
        throw new UnsupportedOperationException("this guest engine has no virtual time");
    }
}
