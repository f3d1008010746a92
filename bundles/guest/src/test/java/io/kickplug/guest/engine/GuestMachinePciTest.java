package io.kickplug.guest.engine;

import io.kickplug.api.transport.TransportKind;

/** Every {@link GuestMachineTest} on virtio-pci modern with MSI-X (VIRTIO 1.2 section 4.1). */
class GuestMachinePciTest extends GuestMachineTest {

    @Override
    TransportKind kind() {
        return TransportKind.PCI;
    }
}
