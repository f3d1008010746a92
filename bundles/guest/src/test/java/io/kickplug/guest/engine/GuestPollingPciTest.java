package io.kickplug.guest.engine;

import io.kickplug.api.transport.TransportKind;

/** Every {@link GuestPollingTest} on virtio-pci modern with MSI-X (VIRTIO 1.2 section 4.1). */
class GuestPollingPciTest extends GuestPollingTest {

    @Override
    TransportKind kind() {
        return TransportKind.PCI;
    }
}
