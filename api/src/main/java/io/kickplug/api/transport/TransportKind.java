package io.kickplug.api.transport;

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
        for (TransportKind kind : values()) {
            if (kind.label.equalsIgnoreCase(text) || kind.name().equalsIgnoreCase(text)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown transport '" + text + "' (expected mmio or pci)");
    }
}
