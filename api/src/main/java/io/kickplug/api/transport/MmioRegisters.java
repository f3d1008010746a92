package io.kickplug.api.transport;

/**
 * virtio-mmio version 2 register offsets and values (VIRTIO 1.2 section 4.2.2, table "MMIO Device Register
 * Layout"), shared by the device side and simulated guests.
 */
public interface MmioRegisters {

    int MAGIC_VALUE = 0x000;
    int VERSION = 0x004;
    int DEVICE_ID = 0x008;
    int VENDOR_ID = 0x00c;
    int DEVICE_FEATURES = 0x010;
    int DEVICE_FEATURES_SEL = 0x014;
    int DRIVER_FEATURES = 0x020;
    int DRIVER_FEATURES_SEL = 0x024;
    int QUEUE_SEL = 0x030;
    int QUEUE_NUM_MAX = 0x034;
    int QUEUE_NUM = 0x038;
    int QUEUE_READY = 0x044;
    int QUEUE_NOTIFY = 0x050;
    int INTERRUPT_STATUS = 0x060;
    int INTERRUPT_ACK = 0x064;
    int STATUS = 0x070;
    int QUEUE_DESC_LOW = 0x080;
    int QUEUE_DESC_HIGH = 0x084;
    int QUEUE_DRIVER_LOW = 0x090;
    int QUEUE_DRIVER_HIGH = 0x094;
    int QUEUE_DEVICE_LOW = 0x0a0;
    int QUEUE_DEVICE_HIGH = 0x0a4;
    int SHM_SEL = 0x0ac;
    int SHM_LEN_LOW = 0x0b0;
    int SHM_LEN_HIGH = 0x0b4;
    int SHM_BASE_LOW = 0x0b8;
    int SHM_BASE_HIGH = 0x0bc;
    int QUEUE_RESET = 0x0c0;
    int CONFIG_GENERATION = 0x0fc;
    int CONFIG = 0x100;

    /** "virt" in little-endian. */
    int MAGIC = 0x74726976;
    int VERSION_2 = 2;
    /** Window size: registers plus up to 3840 bytes of configuration space. */
    int WINDOW_SIZE = 0x1000;

    /** InterruptStatus bits (section 4.2.2). */
    int INT_USED_BUFFER = 1;
    int INT_CONFIG_CHANGE = 2;
}
