package io.kickplug.api.transport;

import io.kickplug.api.text.Labels;

/** The transports a device can sit behind. */
public enum TransportKind {
    /** virtio-mmio version 2 (VIRTIO 1.2 section 4.2). */
    MMIO,
    /** virtio-pci modern (VIRTIO 1.2 section 4.1). */
    PCI,
    /** vhost-user: a frontend such as QEMU owns the guest and the PCI transport. */
    VHOST_USER;

    /** The name used by commands and configurations: {@code mmio}, {@code pci} or {@code vhost-user}. */
    public String label() {
        return Labels.of(this);
    }

    /** Parses a label ("mmio", "pci", "vhost-user"), case-insensitive. */
    public static TransportKind parse(String text) {
        return Labels.parse(TransportKind.class, TransportKind::label, text, "transport");
    }
}
