package io.kickplug.virtio.pci;

/**
 * virtio-pci modern (VIRTIO 1.2 section 4.1): PCI configuration-space offsets, the virtio structure
 * capabilities (4.1.4), the common configuration layout (4.1.4.3), the MSI-X capability and table (PCI
 * Local Bus 3.0 section 6.8.2) and the BAR layout Kickplug's {@code PciTransport} presents.
 */
public final class PciRegisters {
    private PciRegisters() {
    }

    // Type 0 configuration header (PCI Local Bus 3.0 section 6.1).
    public static final int CONFIG_SPACE_SIZE = 0x1000;
    public static final int VENDOR_ID = 0x00;
    public static final int DEVICE_ID = 0x02;
    public static final int COMMAND = 0x04;
    public static final int STATUS = 0x06;
    public static final int REVISION_ID = 0x08;
    /** Class code: prog-if at 0x09, subclass at 0x0a, base class at 0x0b. */
    public static final int CLASS_CODE = 0x09;
    public static final int HEADER_TYPE = 0x0e;
    public static final int BAR0 = 0x10;
    public static final int SUBSYSTEM_VENDOR_ID = 0x2c;
    public static final int SUBSYSTEM_ID = 0x2e;
    public static final int CAPABILITIES_POINTER = 0x34;
    public static final int INTERRUPT_LINE = 0x3c;
    public static final int INTERRUPT_PIN = 0x3d;

    public static final int COMMAND_MEMORY = 0x0002;
    public static final int COMMAND_BUS_MASTER = 0x0004;
    public static final int COMMAND_INTX_DISABLE = 0x0400;
    public static final int STATUS_INTERRUPT = 0x0008;
    public static final int STATUS_CAPABILITIES_LIST = 0x0010;
    public static final int BAR_MEMORY_64 = 0x4;
    public static final int BAR_PREFETCHABLE = 0x8;

    public static final int CAP_ID_VENDOR = 0x09;
    public static final int CAP_ID_MSIX = 0x11;
    /** Offset of cap_next in any capability. */
    public static final int CAP_NEXT = 1;

    // Identification (section 4.1.2).
    public static final int VIRTIO_VENDOR = 0x1af4;
    /** Modern device ID = 0x1040 + virtio device ID. */
    public static final int VIRTIO_DEVICE_ID_BASE = 0x1040;
    /** Section 4.1.2.1: non-transitional devices SHOULD have revision 1 or higher. */
    public static final int VIRTIO_REVISION = 1;
    /** Section 4.1.2.1: non-transitional devices SHOULD have a subsystem ID of 0x40 or higher (QEMU's value). */
    public static final int VIRTIO_SUBSYSTEM_ID = 0x1100;

    /** Class codes (base class, subclass, prog-if) as QEMU assigns them per device type. */
    public static final int CLASS_STORAGE_SCSI = 0x010000;
    public static final int CLASS_NETWORK_ETHERNET = 0x020000;
    public static final int CLASS_COMMUNICATION_OTHER = 0x078000;
    public static final int CLASS_OTHER = 0xff0000;

    // struct virtio_pci_cap (section 4.1.4).
    public static final int VIRTIO_CAP_LEN = 2;
    public static final int VIRTIO_CAP_CFG_TYPE = 3;
    public static final int VIRTIO_CAP_BAR = 4;
    public static final int VIRTIO_CAP_ID = 5;
    public static final int VIRTIO_CAP_OFFSET = 8;
    public static final int VIRTIO_CAP_LENGTH = 12;
    /** struct virtio_pci_notify_cap: notify_off_multiplier follows the cap (section 4.1.4.4). */
    public static final int VIRTIO_CAP_NOTIFY_OFF_MULTIPLIER = 16;
    /** struct virtio_pci_cfg_cap: pci_cfg_data[4] follows the cap (section 4.1.4.9). */
    public static final int VIRTIO_CAP_PCI_CFG_DATA = 16;
    public static final int VIRTIO_CAP_SIZE = 16;
    public static final int VIRTIO_NOTIFY_CAP_SIZE = 20;
    public static final int VIRTIO_PCI_CFG_CAP_SIZE = 20;

    public static final int CFG_TYPE_COMMON = 1;
    public static final int CFG_TYPE_NOTIFY = 2;
    public static final int CFG_TYPE_ISR = 3;
    public static final int CFG_TYPE_DEVICE = 4;
    public static final int CFG_TYPE_PCI = 5;

    // struct virtio_pci_common_cfg (section 4.1.4.3).
    public static final int COMMON_DEVICE_FEATURE_SELECT = 0x00;
    public static final int COMMON_DEVICE_FEATURE = 0x04;
    public static final int COMMON_DRIVER_FEATURE_SELECT = 0x08;
    public static final int COMMON_DRIVER_FEATURE = 0x0c;
    public static final int COMMON_CONFIG_MSIX_VECTOR = 0x10;
    public static final int COMMON_NUM_QUEUES = 0x12;
    public static final int COMMON_DEVICE_STATUS = 0x14;
    public static final int COMMON_CONFIG_GENERATION = 0x15;
    public static final int COMMON_QUEUE_SELECT = 0x16;
    public static final int COMMON_QUEUE_SIZE = 0x18;
    public static final int COMMON_QUEUE_MSIX_VECTOR = 0x1a;
    public static final int COMMON_QUEUE_ENABLE = 0x1c;
    public static final int COMMON_QUEUE_NOTIFY_OFF = 0x1e;
    public static final int COMMON_QUEUE_DESC = 0x20;
    public static final int COMMON_QUEUE_DRIVER = 0x28;
    public static final int COMMON_QUEUE_DEVICE = 0x30;
    public static final int COMMON_QUEUE_NOTIFY_DATA = 0x38;
    public static final int COMMON_QUEUE_RESET = 0x3a;
    /** Size of the VIRTIO 1.2 common configuration structure. */
    public static final int COMMON_CFG_SIZE = 0x3c;

    /** Section 4.1.5.1.2: the vector value that unmaps an event. */
    public static final int NO_VECTOR = 0xffff;

    /** ISR status bits (section 4.1.4.5). */
    public static final int ISR_QUEUE = 1;
    public static final int ISR_CONFIG = 2;

    // MSI-X capability (PCI Local Bus 3.0 section 6.8.2).
    public static final int MSIX_MESSAGE_CONTROL = 2;
    public static final int MSIX_TABLE_OFFSET_BIR = 4;
    public static final int MSIX_PBA_OFFSET_BIR = 8;
    public static final int MSIX_CAP_SIZE = 12;
    public static final int MSIX_CONTROL_TABLE_SIZE_MASK = 0x07ff;
    public static final int MSIX_CONTROL_FUNCTION_MASK = 0x4000;
    public static final int MSIX_CONTROL_ENABLE = 0x8000;
    public static final int MSIX_BIR_MASK = 0x7;
    public static final int MSIX_ENTRY_SIZE = 16;
    public static final int MSIX_ENTRY_ADDR_LO = 0;
    public static final int MSIX_ENTRY_ADDR_HI = 4;
    public static final int MSIX_ENTRY_DATA = 8;
    public static final int MSIX_ENTRY_VECTOR_CONTROL = 12;
    public static final int MSIX_ENTRY_MASKED = 1;
    /** Section 4.1.5.1.2: at most 0x800 vectors. */
    public static final int MSIX_MAX_VECTORS = 0x800;

    // Kickplug's layout: BAR 1 holds the MSI-X table and PBA, BAR 4 (64-bit) the virtio structures.
    public static final int MSIX_BAR = 1;
    public static final int MSIX_TABLE_OFFSET = 0x000;
    public static final int VIRTIO_BAR = 4;
    public static final int COMMON_CFG_OFFSET = 0x0000;
    public static final int ISR_CFG_OFFSET = 0x1000;
    public static final int DEVICE_CFG_OFFSET = 0x2000;
    public static final int NOTIFY_CFG_OFFSET = 0x3000;
    /** Structure region size in BAR 4 (each structure is presented with this length but the device config). */
    public static final int REGION_SIZE = 0x1000;
    /** Bytes between two queues' notify addresses: queue_notify_off is the queue index. */
    public static final int NOTIFY_OFF_MULTIPLIER = 4;
}
