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
}
