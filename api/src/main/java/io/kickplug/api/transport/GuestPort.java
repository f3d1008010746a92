package io.kickplug.api.transport;

import io.kickplug.api.memory.GuestMemory;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Everything a guest may touch of one device: guest memory, the transport's registers, and the
 * interrupt connection. A simulated guest uses nothing else.
 */
@ProviderType
public interface GuestPort {

    TransportKind kind();

    GuestMemory memory();

    /** The MMIO register window (section 4.2.2), or {@code null} (the default) for another transport. */
    default RegisterWindow mmio() {
        return null;
    }

    /** The PCI function (section 4.1), or {@code null} (the default) for another transport. */
    default PciFunction pci() {
        return null;
    }

    /**
     * Connects the guest's interrupt controller, replacing any earlier one; {@code null} disconnects. On a port
     * whose transport is already closed the guest is told at once ({@link GuestInterrupts#deviceRemoved}, from
     * this call), so a guest that found the port just before it closed never drives a device that is gone.
     */
    void connectInterrupts(GuestInterrupts interrupts);
}
