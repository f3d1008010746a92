package io.kickplug.virtio.pci;

/**
 * The virtio-pci layout Kickplug's {@code PciTransport} presents: the spec's registers (VIRTIO 1.2 section
 * 4.1, in {@link io.kickplug.api.transport.PciRegisters}, inherited here) plus the class codes and the BAR
 * layout this transport chose.
 */
public interface PciRegisters extends io.kickplug.api.transport.PciRegisters {

    /** Class codes (base class, subclass, prog-if) as QEMU assigns them per device type. */
    int CLASS_STORAGE_SCSI = 0x010000;
    int CLASS_NETWORK_ETHERNET = 0x020000;
    int CLASS_COMMUNICATION_OTHER = 0x078000;
    int CLASS_OTHER = 0xff0000;

    // Kickplug's layout: BAR 1 holds the MSI-X table and PBA, BAR 4 (64-bit) the virtio structures.
    int MSIX_BAR = 1;
    int MSIX_TABLE_OFFSET = 0x000;
    int VIRTIO_BAR = 4;
    int COMMON_CFG_OFFSET = 0x0000;
    int ISR_CFG_OFFSET = 0x1000;
    int DEVICE_CFG_OFFSET = 0x2000;
    int NOTIFY_CFG_OFFSET = 0x3000;
    /** Structure region size in BAR 4 (each structure is presented with this length but the device config). */
    int REGION_SIZE = 0x1000;
    /** Bytes between two queues' notify addresses: queue_notify_off is the queue index. */
    int NOTIFY_OFF_MULTIPLIER = 4;
}
