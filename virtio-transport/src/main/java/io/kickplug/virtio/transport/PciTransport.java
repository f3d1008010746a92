package io.kickplug.virtio.transport;

import static io.kickplug.virtio.pci.PciRegisters.*;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.transport.PciFunction;
import io.kickplug.api.transport.RegisterWindow;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtqueueFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

/**
 * virtio-pci modern (VIRTIO 1.2 section 4.1): a PCI function whose configuration space carries the virtio
 * structure capabilities and an MSI-X capability, BAR 1 holding the MSI-X table and PBA, and BAR 4 (64-bit)
 * holding the common configuration, ISR status, device configuration and notification structures. Register
 * accesses are decoded onto a {@link VirtioFunction}.
 *
 * <p>Interrupts: with MSI-X enabled a queue raises its queue_msix_vector and a configuration change its
 * config_msix_vector (nothing for NO_VECTOR); without MSI-X the ISR bit is set and vector 0 (INTx) is
 * raised unless the Command register's Interrupt Disable bit is set. The class code follows QEMU: block is
 * 0x010000 (SCSI storage controller), network 0x020000, console 0x078000, anything else 0xff0000. BAR
 * addresses are recorded (and sized, PCI 3.0 section 6.2.5.1) but not used: the guest reaches a BAR by index
 * through {@link #bar(int)}, whatever the Memory Space and Bus Master bits say.
 */
public final class PciTransport extends TransportBase implements PciFunction {
    private static final Logger LOG = Logger.getLogger(PciTransport.class.getName());

    private final PciConfigSpace config = new PciConfigSpace();
    private final ConfigWindow configWindow = new ConfigWindow();
    private final MsixTable msix;
    private final VirtioBar virtioBar;
    private final int notifyLength;
    private final int deviceCfgLength;
    private final int pciCfgCap;
    private final int msixCap;
    private final AtomicInteger isr = new AtomicInteger();
    /** Copy of the Command register for the interrupt path (written under the config-space lock). */
    private volatile int command;
    private volatile int configVector = NO_VECTOR;

    // Common configuration selectors, guarded by this.
    private int deviceFeatureSelect;
    private int driverFeatureSelect;
    private int queueSelect;

    public PciTransport(VirtioDevice device, GuestMemory memory, VirtqueueFactory rings) {
        super(TransportKind.PCI, device, memory, rings);
        int queues = function.queueCount();
        this.msix = new MsixTable(Math.min(queues + 1, MSIX_MAX_VECTORS), this::raise);
        // Section 4.1.4.4.1: cap.length >= queue_notify_off * notify_off_multiplier + 2 for every queue.
        this.notifyLength = roundUp(Math.max(queues, 1) * NOTIFY_OFF_MULTIPLIER, REGION_SIZE);
        this.deviceCfgLength = Math.min(device.configSize(), REGION_SIZE);
        this.virtioBar = new VirtioBar(Long.highestOneBit((NOTIFY_CFG_OFFSET + notifyLength) * 2L - 1));

        PciConfigSpace c = config;
        int deviceId = device.deviceId();
        c.set(VENDOR_ID, 2, VIRTIO_VENDOR);
        c.set(DEVICE_ID, 2, VIRTIO_DEVICE_ID_BASE + deviceId);
        c.writableBits(COMMAND, 2, COMMAND_MEMORY | COMMAND_BUS_MASTER | COMMAND_INTX_DISABLE);
        c.set(REVISION_ID, 1, VIRTIO_REVISION);
        c.set(CLASS_CODE, 3, classCode(deviceId));
        c.writableBits(BAR0 + 4 * MSIX_BAR, 4, (int) -msix.size());
        c.set(BAR0 + 4 * VIRTIO_BAR, 4, BAR_MEMORY_64 | BAR_PREFETCHABLE);
        c.writableBits(BAR0 + 4 * VIRTIO_BAR, 4, (int) -virtioBar.size());
        c.writableBits(BAR0 + 4 * VIRTIO_BAR + 4, 4, -1);
        c.set(SUBSYSTEM_VENDOR_ID, 2, VIRTIO_VENDOR);
        c.set(SUBSYSTEM_ID, 2, VIRTIO_SUBSYSTEM_ID);
        c.writableBits(INTERRUPT_LINE, 1, 0xff);
        c.set(INTERRUPT_PIN, 1, 1); // INTA#

        // Section 4.1.4: the structures in order of preference, each with its bar, offset and length.
        virtioCap(CFG_TYPE_COMMON, VIRTIO_CAP_SIZE, COMMON_CFG_OFFSET, REGION_SIZE);
        int notify = virtioCap(CFG_TYPE_NOTIFY, VIRTIO_NOTIFY_CAP_SIZE, NOTIFY_CFG_OFFSET, notifyLength);
        c.set(notify + VIRTIO_CAP_NOTIFY_OFF_MULTIPLIER, 4, NOTIFY_OFF_MULTIPLIER);
        virtioCap(CFG_TYPE_ISR, VIRTIO_CAP_SIZE, ISR_CFG_OFFSET, REGION_SIZE);
        if (deviceCfgLength > 0) {
            virtioCap(CFG_TYPE_DEVICE, VIRTIO_CAP_SIZE, DEVICE_CFG_OFFSET, deviceCfgLength);
        }
        // Section 4.1.4.9: bar, offset, length and pci_cfg_data are the driver's to write.
        this.pciCfgCap = c.addCapability(CAP_ID_VENDOR, VIRTIO_PCI_CFG_CAP_SIZE);
        c.set(pciCfgCap + VIRTIO_CAP_LEN, 1, VIRTIO_PCI_CFG_CAP_SIZE);
        c.set(pciCfgCap + VIRTIO_CAP_CFG_TYPE, 1, CFG_TYPE_PCI);
        c.writableBits(pciCfgCap + VIRTIO_CAP_BAR, 1, 0xff);
        c.writableBits(pciCfgCap + VIRTIO_CAP_OFFSET, 4, -1);
        c.writableBits(pciCfgCap + VIRTIO_CAP_LENGTH, 4, -1);
        c.writableBits(pciCfgCap + VIRTIO_CAP_PCI_CFG_DATA, 4, -1);

        this.msixCap = c.addCapability(CAP_ID_MSIX, MSIX_CAP_SIZE);
        c.set(msixCap + MSIX_MESSAGE_CONTROL, 2, msix.vectors() - 1);
        c.writableBits(msixCap + MSIX_MESSAGE_CONTROL, 2, MSIX_CONTROL_ENABLE | MSIX_CONTROL_FUNCTION_MASK);
        c.set(msixCap + MSIX_TABLE_OFFSET_BIR, 4, msix.tableOffset() | MSIX_BAR);
        c.set(msixCap + MSIX_PBA_OFFSET_BIR, 4, msix.pbaOffset() | MSIX_BAR);

        function.setInterruptSink(this);
    }

    private int virtioCap(int type, int length, int offset, int structureLength) {
        int at = config.addCapability(CAP_ID_VENDOR, length);
        config.set(at + VIRTIO_CAP_LEN, 1, length);
        config.set(at + VIRTIO_CAP_CFG_TYPE, 1, type);
        config.set(at + VIRTIO_CAP_BAR, 1, VIRTIO_BAR);
        config.set(at + VIRTIO_CAP_OFFSET, 4, offset);
        config.set(at + VIRTIO_CAP_LENGTH, 4, structureLength);
        return at;
    }

    private static int roundUp(int value, int alignment) {
        return (value + alignment - 1) / alignment * alignment;
    }

    /** PCI class code by virtio device type, as QEMU assigns them. */
    static int classCode(int deviceId) {
        return switch (deviceId) {
            case DeviceIds.BLOCK -> CLASS_STORAGE_SCSI;
            case DeviceIds.NET -> CLASS_NETWORK_ETHERNET;
            case DeviceIds.CONSOLE -> CLASS_COMMUNICATION_OTHER;
            default -> CLASS_OTHER;
        };
    }

    // PciFunction

    @Override
    public PciFunction pci() {
        return this;
    }

    @Override
    public RegisterWindow configSpace() {
        return configWindow;
    }

    @Override
    public RegisterWindow bar(int index) {
        return switch (index) {
            case MSIX_BAR -> msix;
            case VIRTIO_BAR -> virtioBar;
            default -> null;
        };
    }

    // InterruptSink (sections 4.1.5.3 and 4.1.5.4)

    @Override
    public void queue(int queue) {
        if (queue < 0 || queue >= function.queueCount()) {
            return;
        }
        if (msix.enabled()) {
            // Section 4.1.5.3.1: NO_VECTOR means no interrupt for this queue.
            int vector = function.queue(queue).msixVector;
            if (vector != NO_VECTOR) {
                msix.signal(vector);
            }
            return;
        }
        isr.getAndUpdate(s -> s | ISR_QUEUE);
        intx();
    }

    @Override
    public void config() {
        // Section 4.1.4.5.1: the configuration bit is set before any configuration change notification.
        isr.getAndUpdate(s -> s | ISR_CONFIG);
        if (msix.enabled()) {
            int vector = configVector;
            if (vector != NO_VECTOR) {
                msix.signal(vector);
            }
            return;
        }
        intx();
    }

    private void intx() {
        if ((command & COMMAND_INTX_DISABLE) == 0) {
            raise(0);
        }
    }

    private void raise(int vector) {
        GuestInterrupts irq = guest.get();
        if (irq != null) {
            irq.raise(vector);
        }
    }

    @Override
    public void onReset() {
        // Sections 2.4 and 4.1.5.1.2: ISR cleared, every event unmapped. MSI-X enable and the table belong to
        // the PCI function, not to the virtio device, and survive.
        isr.set(0);
        configVector = NO_VECTOR;
        synchronized (this) {
            deviceFeatureSelect = 0;
            driverFeatureSelect = 0;
            queueSelect = 0;
        }
    }

    /** Maps a vector the driver wrote: one outside the MSI-X table becomes NO_VECTOR (section 4.1.5.1.2). */
    private int mapVector(int value) {
        int v = value & 0xffff;
        if (v != NO_VECTOR && v >= msix.vectors()) {
            LOG.fine(() -> "MSI-X vector " + v + " is outside the table of " + msix.vectors()
                    + ": mapped to NO_VECTOR (VIRTIO 1.2 section 4.1.5.1.2)");
            return NO_VECTOR;
        }
        return v;
    }

    private QueueConfig selectedQueue() {
        return queueSelect < function.queueCount() ? function.queue(queueSelect) : null;
    }

    // Common configuration (section 4.1.4.3).

    /**
     * Section 4.1.3.1: each field is accessed with its own width; a 64-bit field also as two independent
     * 32-bit halves. Any other access decodes to nothing.
     */
    private static boolean commonAccess(int off, int width) {
        return switch (off) {
            case COMMON_DEVICE_FEATURE_SELECT, COMMON_DEVICE_FEATURE, COMMON_DRIVER_FEATURE_SELECT,
                    COMMON_DRIVER_FEATURE -> width == 4;
            case COMMON_CONFIG_MSIX_VECTOR, COMMON_NUM_QUEUES, COMMON_QUEUE_SELECT, COMMON_QUEUE_SIZE,
                    COMMON_QUEUE_MSIX_VECTOR, COMMON_QUEUE_ENABLE, COMMON_QUEUE_NOTIFY_OFF, COMMON_QUEUE_NOTIFY_DATA,
                    COMMON_QUEUE_RESET -> width == 2;
            case COMMON_DEVICE_STATUS, COMMON_CONFIG_GENERATION -> width == 1;
            case COMMON_QUEUE_DESC, COMMON_QUEUE_DRIVER, COMMON_QUEUE_DEVICE -> width == 4 || width == 8;
            case COMMON_QUEUE_DESC + 4, COMMON_QUEUE_DRIVER + 4, COMMON_QUEUE_DEVICE + 4 -> width == 4;
            default -> false;
        };
    }

    private long readCommon(int off, int width) {
        if (!commonAccess(off, width)) {
            LOG.fine(() -> "common configuration read of " + width + " bytes at 0x" + Integer.toHexString(off)
                    + " ignored");
            return 0;
        }
        switch (off) {
            case COMMON_DEVICE_STATUS:
                return function.status() & 0xff;
            case COMMON_CONFIG_GENERATION:
                return function.configGeneration() & 0xff;
            case COMMON_NUM_QUEUES:
                return function.queueCount();
            case COMMON_CONFIG_MSIX_VECTOR:
                return configVector;
            default:
                break;
        }
        synchronized (this) {
            QueueConfig q = selectedQueue();
            return switch (off) {
                case COMMON_DEVICE_FEATURE_SELECT -> deviceFeatureSelect & 0xffffffffL;
                case COMMON_DEVICE_FEATURE -> function.deviceFeatureWindow(deviceFeatureSelect) & 0xffffffffL;
                case COMMON_DRIVER_FEATURE_SELECT -> driverFeatureSelect & 0xffffffffL;
                case COMMON_DRIVER_FEATURE -> function.driverFeatureWindow(driverFeatureSelect) & 0xffffffffL;
                case COMMON_QUEUE_SELECT -> queueSelect;
                // Section 4.1.4.3.1: 0 for a queue that does not exist.
                case COMMON_QUEUE_SIZE -> q == null ? 0 : q.size;
                case COMMON_QUEUE_MSIX_VECTOR -> q == null ? NO_VECTOR : q.msixVector;
                case COMMON_QUEUE_ENABLE -> q != null && q.ready ? 1 : 0;
                case COMMON_QUEUE_NOTIFY_OFF -> q == null ? 0 : queueSelect;
                case COMMON_QUEUE_DESC, COMMON_QUEUE_DESC + 4 ->
                        q == null ? 0 : part(q.desc, off - COMMON_QUEUE_DESC, width);
                case COMMON_QUEUE_DRIVER, COMMON_QUEUE_DRIVER + 4 ->
                        q == null ? 0 : part(q.driver, off - COMMON_QUEUE_DRIVER, width);
                case COMMON_QUEUE_DEVICE, COMMON_QUEUE_DEVICE + 4 ->
                        q == null ? 0 : part(q.device, off - COMMON_QUEUE_DEVICE, width);
                // queue_notify_data needs NOTIF_CONFIG_DATA and queue_reset RING_RESET; neither is supported.
                default -> 0;
            };
        }
    }

    private static long part(long value, int rel, int width) {
        if (width == 8) {
            return value;
        }
        return rel == 0 ? value & 0xffffffffL : value >>> 32;
    }

    private static long merge(long old, int rel, int width, long value) {
        if (width == 8) {
            return value;
        }
        long u = value & 0xffffffffL;
        return rel == 0 ? (old & 0xffffffff00000000L) | u : (old & 0xffffffffL) | (u << 32);
    }

    private void writeCommon(int off, int width, long value) {
        if (!commonAccess(off, width)) {
            LOG.fine(() -> "common configuration write of " + width + " bytes at 0x" + Integer.toHexString(off)
                    + " ignored");
            return;
        }
        int v = (int) value;
        if (off == COMMON_DEVICE_STATUS) {
            // Not under this monitor: a reset waits for the device's I/O threads (section 4.1.4.3.1: the
            // write of 0 returns once the reset is done, so the next read shows 0).
            function.writeStatus(v & 0xff);
            return;
        }
        if (off == COMMON_CONFIG_MSIX_VECTOR) {
            configVector = mapVector(v);
            return;
        }
        synchronized (this) {
            switch (off) {
                case COMMON_DEVICE_FEATURE_SELECT -> deviceFeatureSelect = v;
                case COMMON_DRIVER_FEATURE_SELECT -> driverFeatureSelect = v;
                case COMMON_DRIVER_FEATURE -> function.writeDriverFeatureWindow(driverFeatureSelect, v);
                case COMMON_QUEUE_SELECT -> queueSelect = v & 0xffff;
                case COMMON_QUEUE_SIZE, COMMON_QUEUE_MSIX_VECTOR, COMMON_QUEUE_ENABLE, COMMON_QUEUE_DESC,
                        COMMON_QUEUE_DESC + 4, COMMON_QUEUE_DRIVER, COMMON_QUEUE_DRIVER + 4, COMMON_QUEUE_DEVICE,
                        COMMON_QUEUE_DEVICE + 4 -> writeQueue(off, width, value);
                default -> LOG.fine(() -> "write to read-only common configuration field 0x"
                        + Integer.toHexString(off) + " ignored (VIRTIO 1.2 section 4.1.4.3.2)");
            }
        }
    }

    private void writeQueue(int off, int width, long value) {
        QueueConfig q = selectedQueue();
        if (q == null) {
            LOG.fine(() -> "queue field written for non-existent queue " + queueSelect + ": ignored");
            return;
        }
        int v = (int) value & 0xffff;
        switch (off) {
            case COMMON_QUEUE_MSIX_VECTOR -> q.msixVector = mapVector(v);
            case COMMON_QUEUE_ENABLE -> {
                if (v != 1) {
                    LOG.fine("queue_enable written with " + v + ": ignored (VIRTIO 1.2 section 4.1.4.3.2: the"
                            + " driver MUST NOT write 0)");
                } else if ((function.status() & DeviceStatus.DRIVER_OK) != 0) {
                    LOG.fine("queue_enable written after DRIVER_OK: ignored");
                } else {
                    q.ready = true;
                }
            }
            default -> {
                // Section 4.1.4.3.2: the other queue fields are configured before queue_enable.
                if (q.ready) {
                    LOG.fine(() -> "queue " + queueSelect + " configured while enabled: ignored");
                    return;
                }
                switch (off) {
                    case COMMON_QUEUE_SIZE -> writeQueueSize(q, v);
                    case COMMON_QUEUE_DESC, COMMON_QUEUE_DESC + 4 ->
                            q.desc = merge(q.desc, off - COMMON_QUEUE_DESC, width, value);
                    case COMMON_QUEUE_DRIVER, COMMON_QUEUE_DRIVER + 4 ->
                            q.driver = merge(q.driver, off - COMMON_QUEUE_DRIVER, width, value);
                    default -> q.device = merge(q.device, off - COMMON_QUEUE_DEVICE, width, value);
                }
            }
        }
    }

    private void writeQueueSize(QueueConfig q, int size) {
        // Section 4.1.4.3.1: the device presents 0 or a power of 2 in queue_size, so a size that is not a
        // power of two, or above the maximum, is not taken.
        if (size == 0 || Integer.bitCount(size) != 1 || size > q.maxSize) {
            LOG.fine(() -> "queue_size " + size + " is not a power of two up to " + q.maxSize
                    + ": ignored (VIRTIO 1.2 section 4.1.4.3.1)");
            return;
        }
        q.size = size;
    }

    // The other structures in BAR 4.

    private long readIsr(int off, int width) {
        // Section 4.1.4.5: reading the ISR status clears it (and de-asserts INTx).
        if (off != 0 || width != 1) {
            return 0;
        }
        return isr.getAndSet(0);
    }

    private long readDeviceConfig(int off, int width) {
        if (off + width > deviceCfgLength) {
            return 0;
        }
        return function.device().readConfig(off, width);
    }

    private void writeDeviceConfig(int off, int width, long value) {
        if (off + width <= deviceCfgLength) {
            function.device().writeConfig(off, width, value);
        }
    }

    private void writeNotify(int off, int width) {
        // Section 4.1.5.2: the driver writes the queue index at cap.offset + queue_notify_off *
        // notify_off_multiplier; the address names the queue (as in QEMU), the written value is not trusted.
        if ((width != 2 && width != 4) || off % NOTIFY_OFF_MULTIPLIER != 0) {
            LOG.fine(() -> "notify write of " + width + " bytes at notify offset 0x" + Integer.toHexString(off)
                    + " ignored");
            return;
        }
        function.notifyQueue(off / NOTIFY_OFF_MULTIPLIER); // hot path: no lock
    }

    /** BAR 4: common configuration, ISR status, device configuration and notifications. */
    private final class VirtioBar implements RegisterWindow {
        private final long size;

        VirtioBar(long size) {
            this.size = size;
        }

        @Override
        public long size() {
            return size;
        }

        private boolean decodes(long offset, int width) {
            return (width == 1 || width == 2 || width == 4 || width == 8) && offset >= 0 && offset + width <= size;
        }

        @Override
        public long read(long offset, int width) {
            if (!decodes(offset, width)) {
                return 0;
            }
            int off = (int) offset;
            if (off < COMMON_CFG_OFFSET + REGION_SIZE) {
                return readCommon(off - COMMON_CFG_OFFSET, width);
            } else if (off < ISR_CFG_OFFSET + REGION_SIZE) {
                return readIsr(off - ISR_CFG_OFFSET, width);
            } else if (off < DEVICE_CFG_OFFSET + REGION_SIZE) {
                return readDeviceConfig(off - DEVICE_CFG_OFFSET, width);
            }
            return 0; // the notification area reads as 0
        }

        @Override
        public void write(long offset, int width, long value) {
            if (!decodes(offset, width)) {
                return;
            }
            int off = (int) offset;
            if (off < COMMON_CFG_OFFSET + REGION_SIZE) {
                writeCommon(off - COMMON_CFG_OFFSET, width, value);
            } else if (off < ISR_CFG_OFFSET + REGION_SIZE) {
                LOG.fine("write to the ISR status ignored");
            } else if (off < DEVICE_CFG_OFFSET + REGION_SIZE) {
                writeDeviceConfig(off - DEVICE_CFG_OFFSET, width, value);
            } else if (off < NOTIFY_CFG_OFFSET + notifyLength) {
                writeNotify(off - NOTIFY_CFG_OFFSET, width);
            }
        }
    }

    /**
     * The configuration space as the guest sees it: the stored bytes, plus the live Interrupt Status bit,
     * the Command register's INTx disable, MSI-X Message Control and the PCI_CFG access window.
     */
    private final class ConfigWindow implements RegisterWindow {
        @Override
        public long size() {
            return CONFIG_SPACE_SIZE;
        }

        private boolean decodes(long offset, int width) {
            return (width == 1 || width == 2 || width == 4) && offset >= 0 && offset + width <= CONFIG_SPACE_SIZE;
        }

        private boolean touches(int off, int width, int field, int fieldWidth) {
            return off < field + fieldWidth && field < off + width;
        }

        @Override
        public long read(long offset, int width) {
            if (!decodes(offset, width)) {
                return 0;
            }
            int off = (int) offset;
            synchronized (config) {
                if (touches(off, width, STATUS, 2)) {
                    // Section 4.1.4.5.1: without MSI-X, Interrupt Status is the OR of the ISR bits.
                    int s = config.get(STATUS, 2) & ~STATUS_INTERRUPT;
                    config.set(STATUS, 2, !msix.enabled() && isr.get() != 0 ? s | STATUS_INTERRUPT : s);
                }
                if (touches(off, width, pciCfgCap + VIRTIO_CAP_PCI_CFG_DATA, 4)) {
                    pciCfgAccess(false);
                }
                return config.get(off, width) & 0xffffffffL;
            }
        }

        @Override
        public void write(long offset, int width, long value) {
            if (!decodes(offset, width)) {
                return;
            }
            int off = (int) offset;
            synchronized (config) {
                config.guestWrite(off, width, value);
                if (touches(off, width, COMMAND, 2)) {
                    int old = command;
                    command = config.get(COMMAND, 2);
                    boolean reenabled = (old & COMMAND_INTX_DISABLE) != 0 && (command & COMMAND_INTX_DISABLE) == 0;
                    if (reenabled && !msix.enabled() && isr.get() != 0) {
                        raise(0); // a pending INTx is asserted once it is no longer disabled
                    }
                }
                if (touches(off, width, msixCap + MSIX_MESSAGE_CONTROL, 2)) {
                    int control = config.get(msixCap + MSIX_MESSAGE_CONTROL, 2);
                    msix.setControl((control & MSIX_CONTROL_ENABLE) != 0, (control & MSIX_CONTROL_FUNCTION_MASK) != 0);
                }
                if (touches(off, width, pciCfgCap + VIRTIO_CAP_PCI_CFG_DATA, 4)) {
                    pciCfgAccess(true);
                }
            }
        }

        /** Section 4.1.4.9: pci_cfg_data is a window of cap.length bytes at cap.offset in BAR cap.bar. */
        private void pciCfgAccess(boolean write) {
            int barIndex = config.get(pciCfgCap + VIRTIO_CAP_BAR, 1);
            long offset = config.get(pciCfgCap + VIRTIO_CAP_OFFSET, 4) & 0xffffffffL;
            int length = config.get(pciCfgCap + VIRTIO_CAP_LENGTH, 4);
            RegisterWindow target = barIndex <= 5 ? bar(barIndex) : null;
            if (target == null || (length != 1 && length != 2 && length != 4) || offset % length != 0
                    || offset + length > target.size()) {
                LOG.fine(() -> "PCI_CFG access to BAR " + barIndex + " offset 0x" + Long.toHexString(offset)
                        + " length " + length + " ignored (VIRTIO 1.2 section 4.1.4.9)");
                return;
            }
            int data = pciCfgCap + VIRTIO_CAP_PCI_CFG_DATA;
            if (write) {
                target.write(offset, length, config.get(data, length) & 0xffffffffL);
            } else {
                config.set(data, length, (int) target.read(offset, length));
            }
        }
    }

    @Override
    public String toString() {
        return "virtio-pci(" + function.device().deviceId() + ", status 0x" + Integer.toHexString(function.status())
                + ")";
    }
}
