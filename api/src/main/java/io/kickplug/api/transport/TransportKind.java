package io.kickplug.api.transport;

import io.kickplug.api.text.Labels;

/** The transports a device can sit behind. */
public enum TransportKind {
    /** virtio-mmio version 2 (VIRTIO 1.2 section 4.2). */
    MMIO("mmio"),
    /** virtio-pci modern (VIRTIO 1.2 section 4.1). */
    PCI("pci"),
    /** vhost-user: a frontend such as QEMU owns the guest and the PCI transport. */
    VHOST_USER("vhost-user");

    private final String label;

    TransportKind(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** Parses a label ("mmio", "pci", "vhost-user"), case-insensitive. */
    public static TransportKind parse(String text) {
        return Labels.parse(TransportKind.class, TransportKind::label, text, "transport");
    }
}
