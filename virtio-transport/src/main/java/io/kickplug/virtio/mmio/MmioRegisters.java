package io.kickplug.virtio.mmio;

/** virtio-mmio version 2 register offsets (VIRTIO 1.2 section 4.2.2, table "MMIO Device Register Layout"). */
public final class MmioRegisters {
    private MmioRegisters() {
    }

    public static final int MAGIC_VALUE = 0x000;
    public static final int VERSION = 0x004;
    public static final int DEVICE_ID = 0x008;
    public static final int VENDOR_ID = 0x00c;
    public static final int DEVICE_FEATURES = 0x010;
    public static final int DEVICE_FEATURES_SEL = 0x014;
    public static final int DRIVER_FEATURES = 0x020;
    public static final int DRIVER_FEATURES_SEL = 0x024;
    public static final int QUEUE_SEL = 0x030;
    public static final int QUEUE_NUM_MAX = 0x034;
    public static final int QUEUE_NUM = 0x038;
    public static final int QUEUE_READY = 0x044;
    public static final int QUEUE_NOTIFY = 0x050;
    public static final int INTERRUPT_STATUS = 0x060;
    public static final int INTERRUPT_ACK = 0x064;
    public static final int STATUS = 0x070;
    public static final int QUEUE_DESC_LOW = 0x080;
    public static final int QUEUE_DESC_HIGH = 0x084;
    public static final int QUEUE_DRIVER_LOW = 0x090;
    public static final int QUEUE_DRIVER_HIGH = 0x094;
    public static final int QUEUE_DEVICE_LOW = 0x0a0;
    public static final int QUEUE_DEVICE_HIGH = 0x0a4;
    public static final int SHM_SEL = 0x0ac;
    public static final int SHM_LEN_LOW = 0x0b0;
    public static final int SHM_LEN_HIGH = 0x0b4;
    public static final int SHM_BASE_LOW = 0x0b8;
    public static final int SHM_BASE_HIGH = 0x0bc;
    public static final int QUEUE_RESET = 0x0c0;
    public static final int CONFIG_GENERATION = 0x0fc;
    public static final int CONFIG = 0x100;

    /** "virt" in little-endian. */
    public static final int MAGIC = 0x74726976;
    public static final int VERSION_2 = 2;
    /** Window size: registers plus up to 3840 bytes of configuration space. */
    public static final int WINDOW_SIZE = 0x1000;

    /** InterruptStatus bits (section 4.2.2). */
    public static final int INT_USED_BUFFER = 1;
    public static final int INT_CONFIG_CHANGE = 2;
}
