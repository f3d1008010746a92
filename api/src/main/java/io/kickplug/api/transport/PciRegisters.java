package io.kickplug.api.transport;

/**
 * virtio-pci modern register layout (VIRTIO 1.2 section 4.1), shared by the device side and simulated guests:
 * PCI configuration-space offsets (PCI Local Bus 3.0 section 6.1), the virtio structure capabilities
 * (4.1.4), the common configuration layout (4.1.4.3), the ISR bits (4.1.4.5) and the MSI-X capability and
 * table (PCI Local Bus 3.0 section 6.8.2). Which BAR holds what is the transport's choice, not here.
 */
public interface PciRegisters {

    // Type 0 configuration header (PCI Local Bus 3.0 section 6.1).
    int CONFIG_SPACE_SIZE = 0x1000;
    /** The conventional (PCI 3.0) configuration space: capabilities live below this. */
    int CONFIG_HEADER_SIZE = 0x100;
    /** The standard header; capabilities start at or after it. */
    int STD_HEADER_SIZE = 0x40;
    int VENDOR_ID = 0x00;
    int DEVICE_ID = 0x02;
    int COMMAND = 0x04;
    int STATUS = 0x06;
    int REVISION_ID = 0x08;
    /** Class code: prog-if at 0x09, subclass at 0x0a, base class at 0x0b. */
    int CLASS_CODE = 0x09;
    int HEADER_TYPE = 0x0e;
    int BAR0 = 0x10;
    /** Base address registers of a type 0 header. */
    int NUM_BARS = 6;
    int SUBSYSTEM_VENDOR_ID = 0x2c;
    int SUBSYSTEM_ID = 0x2e;
    int CAPABILITIES_POINTER = 0x34;
    int INTERRUPT_LINE = 0x3c;
    int INTERRUPT_PIN = 0x3d;

    int COMMAND_MEMORY = 0x0002;
    int COMMAND_BUS_MASTER = 0x0004;
    int COMMAND_INTX_DISABLE = 0x0400;
    int STATUS_INTERRUPT = 0x0008;
    int STATUS_CAPABILITIES_LIST = 0x0010;
    int BAR_MEMORY_64 = 0x4;
    int BAR_PREFETCHABLE = 0x8;

    int CAP_ID_VENDOR = 0x09;
    int CAP_ID_MSIX = 0x11;
    /** Offset of cap_next in any capability. */
    int CAP_NEXT = 1;

    // Identification (section 4.1.2).
    /** The PCI vendor of every virtio device. */
    int VIRTIO_VENDOR = 0x1af4;
    /** 0x1000-0x103f: transitional devices; 0x1040-0x107f: modern ones. */
    int VIRTIO_DEVICE_ID_FIRST = 0x1000;
    /** Modern device ID = 0x1040 + virtio device ID. */
    int VIRTIO_DEVICE_ID_BASE = 0x1040;
    int VIRTIO_DEVICE_ID_LAST = 0x107f;
    /** Section 4.1.2.1: non-transitional devices SHOULD have revision 1 or higher. */
    int VIRTIO_REVISION = 1;
    /** Section 4.1.2.1: non-transitional devices SHOULD have a subsystem ID of 0x40 or higher (QEMU's value). */
    int VIRTIO_SUBSYSTEM_ID = 0x1100;

    // struct virtio_pci_cap (section 4.1.4).
    int VIRTIO_CAP_LEN = 2;
    int VIRTIO_CAP_CFG_TYPE = 3;
    int VIRTIO_CAP_BAR = 4;
    int VIRTIO_CAP_ID = 5;
    int VIRTIO_CAP_OFFSET = 8;
    int VIRTIO_CAP_LENGTH = 12;
    /** struct virtio_pci_notify_cap: notify_off_multiplier follows the cap (section 4.1.4.4). */
    int VIRTIO_CAP_NOTIFY_OFF_MULTIPLIER = 16;
    /** struct virtio_pci_cfg_cap: pci_cfg_data[4] follows the cap (section 4.1.4.9). */
    int VIRTIO_CAP_PCI_CFG_DATA = 16;
    int VIRTIO_CAP_SIZE = 16;
    int VIRTIO_NOTIFY_CAP_SIZE = 20;
    int VIRTIO_PCI_CFG_CAP_SIZE = 20;

    int CFG_TYPE_COMMON = 1;
    int CFG_TYPE_NOTIFY = 2;
    int CFG_TYPE_ISR = 3;
    int CFG_TYPE_DEVICE = 4;
    int CFG_TYPE_PCI = 5;

    // struct virtio_pci_common_cfg (section 4.1.4.3).
    int COMMON_DEVICE_FEATURE_SELECT = 0x00;
    int COMMON_DEVICE_FEATURE = 0x04;
    int COMMON_DRIVER_FEATURE_SELECT = 0x08;
    int COMMON_DRIVER_FEATURE = 0x0c;
    int COMMON_CONFIG_MSIX_VECTOR = 0x10;
    int COMMON_NUM_QUEUES = 0x12;
    int COMMON_DEVICE_STATUS = 0x14;
    int COMMON_CONFIG_GENERATION = 0x15;
    int COMMON_QUEUE_SELECT = 0x16;
    int COMMON_QUEUE_SIZE = 0x18;
    int COMMON_QUEUE_MSIX_VECTOR = 0x1a;
    int COMMON_QUEUE_ENABLE = 0x1c;
    int COMMON_QUEUE_NOTIFY_OFF = 0x1e;
    int COMMON_QUEUE_DESC = 0x20;
    int COMMON_QUEUE_DRIVER = 0x28;
    int COMMON_QUEUE_DEVICE = 0x30;
    int COMMON_QUEUE_NOTIFY_DATA = 0x38;
    int COMMON_QUEUE_RESET = 0x3a;
    /** The VIRTIO 1.0 common structure (up to queue_device): what a driver needs of it. */
    int COMMON_CFG_SIZE_1_0 = 0x38;
    /** Size of the VIRTIO 1.2 common configuration structure. */
    int COMMON_CFG_SIZE = 0x3c;

    /** Section 4.1.5.1.2: the vector value that unmaps an event; also the answer of a device that cannot map it. */
    int NO_VECTOR = 0xffff;

    /** ISR status bits (section 4.1.4.5). */
    int ISR_QUEUE = 1;
    int ISR_CONFIG = 2;

    // MSI-X capability (PCI Local Bus 3.0 section 6.8.2).
    int MSIX_MESSAGE_CONTROL = 2;
    int MSIX_TABLE_OFFSET_BIR = 4;
    int MSIX_PBA_OFFSET_BIR = 8;
    int MSIX_CAP_SIZE = 12;
    int MSIX_CONTROL_TABLE_SIZE_MASK = 0x07ff;
    int MSIX_CONTROL_FUNCTION_MASK = 0x4000;
    int MSIX_CONTROL_ENABLE = 0x8000;
    int MSIX_BIR_MASK = 0x7;
    int MSIX_ENTRY_SIZE = 16;
    int MSIX_ENTRY_ADDR_LO = 0;
    int MSIX_ENTRY_ADDR_HI = 4;
    int MSIX_ENTRY_DATA = 8;
    int MSIX_ENTRY_VECTOR_CONTROL = 12;
    int MSIX_ENTRY_MASKED = 1;
    /** Section 4.1.5.1.2: at most 0x800 vectors. */
    int MSIX_MAX_VECTORS = 0x800;
}
