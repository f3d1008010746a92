package io.kickplug.guest.workload;

import io.kickplug.api.transport.TransportKind;

/** Every {@link WriteReadVerifyEndToEndTest} on virtio-pci modern with MSI-X (VIRTIO 1.2 section 4.1). */
class WriteReadVerifyPciTest extends WriteReadVerifyEndToEndTest {

    @Override
    TransportKind kind() {
        return TransportKind.PCI;
    }
}
