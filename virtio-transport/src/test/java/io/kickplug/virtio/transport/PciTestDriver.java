package io.kickplug.virtio.transport;

import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import static io.kickplug.virtio.pci.PciRegisters.*;
import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.RegisterWindow;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtqueueFactory;
import java.util.HashMap;
import java.util.Map;

/**
 * {@link TestDriver} over virtio-pci modern (section 4.1.5). Like a driver, it knows nothing of the layout:
 * it walks the capability list (section 4.1.5.1.1) and uses the first structure of each type. With
 * {@code msix} it enables MSI-X, unmasks every table entry and maps the configuration change to vector 0
 * and queue i to vector i + 1 (as Linux does); without, it takes INTx (vector 0) and reads the ISR.
 */
final class PciTestDriver extends TestDriver {
    /** One virtio structure as its capability describes it. */
    record Structure(int cap, int bar, long offset, long length) {
    }

    private final PciTransport pci;
    private final boolean msix;
    final Map<Integer, Structure> structures = new HashMap<>();
    final int notifyMultiplier;
    final int msixCap;

    PciTestDriver(VirtioDevice device, GuestMemory memory, boolean msix) {
        this(device, memory, msix, new VirtqueueFactoryComponent());
    }

    PciTestDriver(VirtioDevice device, GuestMemory memory, boolean msix, VirtqueueFactory rings) {
        this.pci = new PciTransport(device, memory, rings);
        this.msix = msix;
        RegisterWindow cfg = pci.configSpace();
        assertNotEquals(0, cfg.read(STATUS, 2) & STATUS_CAPABILITIES_LIST);
        int msixAt = 0;
        int at = (int) cfg.read(CAPABILITIES_POINTER, 1);
        for (int steps = 0; at != 0; steps++) {
            assertTrue(steps < 48 && at >= 0x40 && (at & 3) == 0, "capability list is malformed at 0x"
                    + Integer.toHexString(at));
            int id = (int) cfg.read(at, 1);
            if (id == CAP_ID_VENDOR) {
                int type = (int) cfg.read(at + VIRTIO_CAP_CFG_TYPE, 1);
                structures.putIfAbsent(type, new Structure(at, (int) cfg.read(at + VIRTIO_CAP_BAR, 1),
                        cfg.read(at + VIRTIO_CAP_OFFSET, 4), cfg.read(at + VIRTIO_CAP_LENGTH, 4)));
            } else if (id == CAP_ID_MSIX && msixAt == 0) {
                msixAt = at;
            }
            at = (int) cfg.read(at + CAP_NEXT, 1);
        }
        this.msixCap = msixAt;
        Structure notify = structures.get(CFG_TYPE_NOTIFY);
        assertNotNull(notify, "no notification capability");
        this.notifyMultiplier = (int) cfg.read(notify.cap() + VIRTIO_CAP_NOTIFY_OFF_MULTIPLIER, 4);
        cfg.write(COMMAND, 2, COMMAND_MEMORY | COMMAND_BUS_MASTER);
        if (msix) {
            enableMsix();
        }
        connect(pci);
    }

    private void enableMsix() {
        assertNotEquals(0, msixCap, "no MSI-X capability");
        RegisterWindow cfg = pci.configSpace();
        int vectors = (int) (cfg.read(msixCap + MSIX_MESSAGE_CONTROL, 2) & MSIX_CONTROL_TABLE_SIZE_MASK) + 1;
        for (int v = 0; v < vectors; v++) {
            long entry = msixTableEntry(v);
            RegisterWindow bar = msixTableBar();
            bar.write(entry + MSIX_ENTRY_ADDR_LO, 4, 0xfee00000L);
            bar.write(entry + MSIX_ENTRY_ADDR_HI, 4, 0);
            bar.write(entry + MSIX_ENTRY_DATA, 4, 0x40 + v);
            bar.write(entry + MSIX_ENTRY_VECTOR_CONTROL, 4, 0);
        }
        cfg.write(msixCap + MSIX_MESSAGE_CONTROL, 2, MSIX_CONTROL_ENABLE);
    }

    RegisterWindow msixTableBar() {
        return pci.bar((int) pci.configSpace().read(msixCap + MSIX_TABLE_OFFSET_BIR, 4) & MSIX_BIR_MASK);
    }

    long msixTableEntry(int vector) {
        long table = pci.configSpace().read(msixCap + MSIX_TABLE_OFFSET_BIR, 4) & ~(long) MSIX_BIR_MASK;
        return table + (long) MSIX_ENTRY_SIZE * vector;
    }

    PciTransport pci() {
        return pci;
    }

    boolean msix() {
        return msix;
    }

    long read(int type, long off, int width) {
        Structure s = structures.get(type);
        return pci.bar(s.bar()).read(s.offset() + off, width);
    }

    void write(int type, long off, int width, long value) {
        Structure s = structures.get(type);
        pci.bar(s.bar()).write(s.offset() + off, width, value);
    }

    long common(int off, int width) {
        return read(CFG_TYPE_COMMON, off, width);
    }

    void common(int off, int width, long value) {
        write(CFG_TYPE_COMMON, off, width, value);
    }

    @Override
    TransportBase transport() {
        return pci;
    }

    @Override
    int readStatus() {
        return (int) common(COMMON_DEVICE_STATUS, 1);
    }

    @Override
    void writeStatus(int status) {
        common(COMMON_DEVICE_STATUS, 1, status);
    }

    @Override
    long deviceFeatures() {
        common(COMMON_DEVICE_FEATURE_SELECT, 4, 0);
        long lo = common(COMMON_DEVICE_FEATURE, 4);
        common(COMMON_DEVICE_FEATURE_SELECT, 4, 1);
        return lo | (common(COMMON_DEVICE_FEATURE, 4) << 32);
    }

    @Override
    void writeDriverFeatures(long f) {
        common(COMMON_DRIVER_FEATURE_SELECT, 4, 0);
        common(COMMON_DRIVER_FEATURE, 4, f & 0xffffffffL);
        common(COMMON_DRIVER_FEATURE_SELECT, 4, 1);
        common(COMMON_DRIVER_FEATURE, 4, f >>> 32);
    }

    @Override
    void setUpInterrupts() {
        if (msix) {
            common(COMMON_CONFIG_MSIX_VECTOR, 2, 0);
            // Section 4.1.5.1.2: the driver verifies the mapping by reading it back.
            assertEquals(0, common(COMMON_CONFIG_MSIX_VECTOR, 2));
        }
    }

    @Override
    int queueMaxSize(int index) {
        common(COMMON_QUEUE_SELECT, 2, index);
        return (int) common(COMMON_QUEUE_SIZE, 2);
    }

    @Override
    void setUpQueue(int index, QueueLayout l) {
        common(COMMON_QUEUE_SELECT, 2, index);
        common(COMMON_QUEUE_SIZE, 2, l.size());
        // Section 4.1.3.1: 64-bit fields as two 32-bit halves, as Linux writes them.
        common(COMMON_QUEUE_DESC, 4, l.descTable() & 0xffffffffL);
        common(COMMON_QUEUE_DESC + 4, 4, l.descTable() >>> 32);
        common(COMMON_QUEUE_DRIVER, 4, l.availRing() & 0xffffffffL);
        common(COMMON_QUEUE_DRIVER + 4, 4, l.availRing() >>> 32);
        common(COMMON_QUEUE_DEVICE, 4, l.usedRing() & 0xffffffffL);
        common(COMMON_QUEUE_DEVICE + 4, 4, l.usedRing() >>> 32);
        if (msix) {
            common(COMMON_QUEUE_MSIX_VECTOR, 2, index + 1);
            if (index < common(COMMON_NUM_QUEUES, 2)) {
                // Section 4.1.5.1.2: the driver verifies the mapping by reading it back.
                common(COMMON_QUEUE_SELECT, 2, index);
                assertEquals(index + 1, common(COMMON_QUEUE_MSIX_VECTOR, 2));
            }
        }
        common(COMMON_QUEUE_ENABLE, 2, 1);
    }

    @Override
    boolean queueEnabled(int index) {
        common(COMMON_QUEUE_SELECT, 2, index);
        return common(COMMON_QUEUE_ENABLE, 2) == 1;
    }

    /** The notify address of a queue (section 4.1.4.4): cap.offset + queue_notify_off * multiplier. */
    long notifyOffset(int index) {
        long notifyOff;
        if (index < common(COMMON_NUM_QUEUES, 2)) {
            common(COMMON_QUEUE_SELECT, 2, index);
            notifyOff = common(COMMON_QUEUE_NOTIFY_OFF, 2);
        } else {
            notifyOff = index; // a hostile guest: no queue_notify_off to read, so guess the index
        }
        return notifyOff * notifyMultiplier;
    }

    @Override
    void notifyQueue(int index) {
        write(CFG_TYPE_NOTIFY, notifyOffset(index), 2, index);
    }

    @Override
    long readDeviceConfig(int offset, int width) {
        return read(CFG_TYPE_DEVICE, offset, width);
    }

    @Override
    int configGeneration() {
        return (int) common(COMMON_CONFIG_GENERATION, 1);
    }

    @Override
    int takeInterruptCause() {
        return (int) read(CFG_TYPE_ISR, 0, 1);
    }

    @Override
    void awaitQueueInterrupt(int index) throws InterruptedException {
        int v = awaitVector();
        if (msix) {
            assertEquals(index + 1, v, "section 4.1.5.3: the queue's queue_msix_vector");
        } else {
            assertEquals(0, v, "section 4.1.5.3: INTx");
            assertEquals(ISR_QUEUE, takeInterruptCause() & ISR_QUEUE, "section 4.1.4.5: ISR queue bit");
        }
    }

    @Override
    void awaitConfigInterrupt() throws InterruptedException {
        assertEquals(0, awaitVector(), "section 4.1.5.4: config_msix_vector 0, or INTx");
        // Section 4.1.4.5.1: the configuration bit is set before any configuration change notification.
        assertEquals(ISR_CONFIG, takeInterruptCause() & ISR_CONFIG);
    }

    @Override
    public String toString() {
        return msix ? "pci-msix" : "pci-intx";
    }
}
