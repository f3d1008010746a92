package io.kickplug.api.transport;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * The guest's interrupt controller, as the device side sees it. Implemented by a guest.
 *
 * <p>virtio-mmio raises vector 0 (its one interrupt line) whenever InterruptStatus gains a bit; virtio-pci
 * with MSI-X raises the MSI-X table entry of the queue or of the configuration change; virtio-pci without
 * MSI-X raises vector 0 (INTx) after setting the ISR. May be called from any device thread; must not block.
 */
@ConsumerType
public interface GuestInterrupts {

    void raise(int vector);

    /**
     * The device went away: the host closed its transport (a bundle serving it stopped or is being updated,
     * or the disk was detached). Called once per connected guest (at the connect when the transport was
     * already closed), after the device's reset has finished, so every request the
     * device will ever complete is already in the used rings; nothing of this transport raises interrupts
     * afterwards. A guest that wants the device back looks for it again (hot-unplug; the disk may return
     * behind a new transport, with the same guest memory, when its bundles return). Must not block.
     */
    default void deviceRemoved() {
    }
}
