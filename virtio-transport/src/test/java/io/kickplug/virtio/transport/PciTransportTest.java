package io.kickplug.virtio.transport;

import static io.kickplug.virtio.pci.PciRegisters.*;
import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.transport.RegisterWindow;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.SplitDriverQueue;
import io.kickplug.virtio.testkit.Closing;
import io.kickplug.virtio.testkit.EchoDevice;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What only virtio-pci has (VIRTIO 1.2 section 4.1): configuration space, capabilities, BARs, MSI-X, ISR. */
class PciTransportTest {
    private static final long FEATURES = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_EVENT_IDX;

    private final OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(1 << 20);
    private final EchoDevice device = new EchoDevice(2, VirtioFeatures.RING_EVENT_IDX);
    private PciTestDriver driver;

    @AfterEach
    void tearDown() throws Exception {
        Closing.inOrder(driver, device);
    }

    private PciTestDriver open(boolean msix) {
        driver = new PciTestDriver(device, mem, msix);
        return driver;
    }

    private RegisterWindow cfg() {
        return driver.pci().configSpace();
    }

    /** Section 3.1.1 up to FEATURES_OK. */
    private void negotiate() {
        driver.writeStatus(0);
        driver.writeStatus(DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER);
        driver.writeDriverFeatures(FEATURES);
        driver.writeStatus(DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER | DeviceStatus.FEATURES_OK);
        assertNotEquals(0, driver.readStatus() & DeviceStatus.FEATURES_OK);
    }

    private SplitDriverQueue queue(int index, long base) {
        QueueLayout l = QueueLayout.contiguous(8, base);
        driver.setUpQueue(index, l);
        return new SplitDriverQueue(mem, l, FEATURES, -1, 0);
    }

    private void driverOk() {
        driver.writeStatus(driver.readStatus() | DeviceStatus.DRIVER_OK);
        assertTrue(driver.function().isActive());
    }

    private int isr() {
        return driver.takeInterruptCause();
    }

    private long pba() {
        RegisterWindow bar = driver.msixTableBar();
        long pba = cfg().read(driver.msixCap + MSIX_PBA_OFFSET_BIR, 4) & ~(long) MSIX_BIR_MASK;
        return bar.read(pba, 8);
    }

    private void maskVector(int vector, boolean masked) {
        driver.msixTableBar().write(driver.msixTableEntry(vector) + MSIX_ENTRY_VECTOR_CONTROL, 4, masked ? 1 : 0);
    }

    @Test
    void identification() {
        open(false);
        // Section 4.1.2.1: vendor 0x1AF4, device 0x1040 + device ID, revision >= 1, subsystem ID >= 0x40.
        assertEquals(0x1af4, cfg().read(VENDOR_ID, 2));
        assertEquals(0x1040 + 42, cfg().read(DEVICE_ID, 2));
        assertTrue(cfg().read(REVISION_ID, 1) >= 1);
        assertEquals(0x1af4, cfg().read(SUBSYSTEM_VENDOR_ID, 2));
        assertTrue(cfg().read(SUBSYSTEM_ID, 2) >= 0x40);
        assertEquals(0, cfg().read(HEADER_TYPE, 1));
        assertEquals(CLASS_OTHER, cfg().read(CLASS_CODE, 4) & 0xffffff);
        assertEquals(CLASS_STORAGE_SCSI, PciTransport.classCode(DeviceIds.BLOCK));
        assertEquals(1, cfg().read(INTERRUPT_PIN, 1));
        // Writes to read-only header fields change nothing.
        cfg().write(VENDOR_ID, 4, 0x12345678L);
        assertEquals(0x1af4, cfg().read(VENDOR_ID, 2));
        PciTransport t = driver.pci();
        assertEquals(TransportKind.PCI, t.kind());
        assertSame(t, t.port().pci());
        assertNull(t.port().mmio());
        for (int bar : new int[] {0, 2, 3, 5}) {
            assertNull(t.bar(bar), "BAR " + bar);
        }
    }

    @Test
    void capabilityWalkFindsEveryStructure() {
        open(false);
        // Section 4.1.4: one capability per structure, each with its bar, offset and length.
        for (int type = CFG_TYPE_COMMON; type <= CFG_TYPE_PCI; type++) {
            assertTrue(driver.structures.containsKey(type), "cfg_type " + type);
        }
        List<long[]> ranges = new ArrayList<>();
        for (int type = CFG_TYPE_COMMON; type <= CFG_TYPE_DEVICE; type++) {
            PciTestDriver.Structure s = driver.structures.get(type);
            RegisterWindow bar = driver.pci().bar(s.bar());
            assertNotNull(bar, "cfg_type " + type + " names BAR " + s.bar());
            assertTrue(s.length() > 0 && s.offset() + s.length() <= bar.size(), "cfg_type " + type + " fits");
            for (long[] r : ranges) {
                assertTrue(s.offset() + s.length() <= r[0] || r[1] <= s.offset(), "structures overlap");
            }
            ranges.add(new long[] {s.offset(), s.offset() + s.length()});
        }
        PciTestDriver.Structure common = driver.structures.get(CFG_TYPE_COMMON);
        assertEquals(0, common.offset() % 4, "section 4.1.4.3.1: offset 4-byte aligned");
        assertTrue(common.length() >= COMMON_CFG_SIZE);
        PciTestDriver.Structure device = driver.structures.get(CFG_TYPE_DEVICE);
        assertEquals(0, device.offset() % 4, "section 4.1.4.6.1: offset 4-byte aligned");
        assertTrue(device.length() >= 8);
        // Section 4.1.4.4.1: offset 2-byte aligned, multiplier an even power of two (or 0), and room for
        // every queue's notify address.
        PciTestDriver.Structure notify = driver.structures.get(CFG_TYPE_NOTIFY);
        assertEquals(0, notify.offset() % 2);
        int m = driver.notifyMultiplier;
        assertTrue(m == 0 || (Integer.bitCount(m) == 1 && Integer.numberOfTrailingZeros(m) % 2 == 0), "multiplier " + m);
        for (int q = 0; q < 2; q++) {
            assertTrue(driver.notifyOffset(q) + 2 <= notify.length(), "queue " + q + " notify address");
        }
        // Section 4.1.5.1.2 / PCI 3.0 section 6.8.2: MSI-X table of queues + 1 vectors, table and PBA in a BAR.
        assertNotEquals(0, driver.msixCap);
        assertEquals(3, (cfg().read(driver.msixCap + MSIX_MESSAGE_CONTROL, 2) & MSIX_CONTROL_TABLE_SIZE_MASK) + 1);
        RegisterWindow msixBar = driver.msixTableBar();
        assertNotNull(msixBar);
        long table = driver.msixTableEntry(0);
        long pbaReg = cfg().read(driver.msixCap + MSIX_PBA_OFFSET_BIR, 4);
        long pba = pbaReg & ~(long) MSIX_BIR_MASK;
        assertSame(msixBar, driver.pci().bar((int) pbaReg & MSIX_BIR_MASK));
        assertTrue(table + 3 * MSIX_ENTRY_SIZE <= pba && pba + 8 <= msixBar.size());
    }

    @Test
    void barSizingFollowsTheWriteMask() {
        open(false);
        // PCI 3.0 section 6.2.5.1: writing all ones reads back the size mask with the type bits.
        long size4 = driver.pci().bar(VIRTIO_BAR).size();
        cfg().write(BAR0 + 4 * VIRTIO_BAR, 4, 0xffffffffL);
        cfg().write(BAR0 + 4 * VIRTIO_BAR + 4, 4, 0xffffffffL);
        assertEquals((-size4 & 0xffffffffL) | BAR_MEMORY_64 | BAR_PREFETCHABLE, cfg().read(BAR0 + 4 * VIRTIO_BAR, 4));
        assertEquals(0xffffffffL, cfg().read(BAR0 + 4 * VIRTIO_BAR + 4, 4));
        long size1 = driver.pci().bar(MSIX_BAR).size();
        cfg().write(BAR0 + 4 * MSIX_BAR, 4, 0xffffffffL);
        assertEquals(-size1 & 0xffffffffL, cfg().read(BAR0 + 4 * MSIX_BAR, 4));
        cfg().write(BAR0, 4, 0xffffffffL);
        assertEquals(0, cfg().read(BAR0, 4), "BAR 0 is not implemented");
        cfg().write(BAR0 + 4 * VIRTIO_BAR, 4, 0xfebf0000L);
        assertEquals(0xfebf0000L | BAR_MEMORY_64 | BAR_PREFETCHABLE, cfg().read(BAR0 + 4 * VIRTIO_BAR, 4));
    }

    @Test
    void msixVectorPerQueueIsDeliveredToThatVector() throws Exception {
        open(true);
        negotiate();
        driver.setUpInterrupts();
        SplitDriverQueue q0 = queue(0, 0x1000);
        SplitDriverQueue q1 = queue(1, 0x4000);
        // Swap the driver's mapping: queue 0 -> vector 2, queue 1 -> vector 1 (section 4.1.5.1.2).
        driver.common(COMMON_QUEUE_SELECT, 2, 0);
        driver.common(COMMON_QUEUE_MSIX_VECTOR, 2, 2);
        driver.common(COMMON_QUEUE_SELECT, 2, 1);
        driver.common(COMMON_QUEUE_MSIX_VECTOR, 2, 1);
        driverOk();
        q1.add(List.of(BufferSpec.writable(0x20000, 1)), false, "q1");
        assertTrue(q1.kickPrepare());
        driver.notifyQueue(1);
        assertEquals(1, driver.awaitVector(), "section 4.1.5.3: queue 1's vector");
        q0.add(List.of(BufferSpec.writable(0x21000, 1)), false, "q0");
        assertTrue(q0.kickPrepare());
        driver.notifyQueue(0);
        assertEquals(2, driver.awaitVector(), "section 4.1.5.3: queue 0's vector");
        assertEquals("q1", q1.getUsed().token());
        assertEquals("q0", q0.getUsed().token());
        // Section 4.1.4.5.1: with MSI-X the queue bit of the ISR is not used.
        assertEquals(0, isr());
    }

    @Test
    void configVectorAndNoVector() throws Exception {
        open(true);
        negotiate();
        driver.setUpInterrupts();
        queue(0, 0x1000);
        driverOk();
        // Section 4.1.5.4: a configuration change raises config_msix_vector (synchronously, on this thread).
        driver.function().configChanged();
        assertEquals(0, driver.awaitVector());
        assertEquals(ISR_CONFIG, isr(), "section 4.1.4.5.1: the config bit is set even with MSI-X");
        // Sections 4.1.5.3.1 / 4.1.5.4.1: NO_VECTOR means no interrupt at all.
        driver.common(COMMON_CONFIG_MSIX_VECTOR, 2, NO_VECTOR);
        driver.function().configChanged();
        driver.common(COMMON_QUEUE_SELECT, 2, 0);
        driver.common(COMMON_QUEUE_MSIX_VECTOR, 2, NO_VECTOR);
        driver.function().usedBuffer(0);
        assertEquals(0, driver.unclaimedInterrupts());
        driver.common(COMMON_CONFIG_MSIX_VECTOR, 2, 2);
        driver.function().configChanged();
        assertEquals(2, driver.awaitVector());
        assertEquals(0, driver.unclaimedInterrupts());
    }

    @Test
    void isrIsReadToClearWithoutMsix() throws Exception {
        open(false);
        negotiate();
        queue(0, 0x1000);
        driverOk();
        driver.function().usedBuffer(0);
        driver.function().configChanged();
        assertEquals(0, driver.awaitVector());
        assertEquals(0, driver.awaitVector());
        // Section 4.1.4.5.1: without MSI-X, the Interrupt Status bit of the PCI status register is the OR
        // of the ISR bits; section 4.1.4.5: a read returns the bits and clears them.
        assertNotEquals(0, cfg().read(STATUS, 2) & STATUS_INTERRUPT);
        assertEquals(ISR_QUEUE | ISR_CONFIG, isr());
        assertEquals(0, isr());
        assertEquals(0, cfg().read(STATUS, 2) & STATUS_INTERRUPT);
        // PCI 3.0 section 6.2.2: Interrupt Disable holds INTx back; clearing it asserts the pending one.
        cfg().write(COMMAND, 2, COMMAND_MEMORY | COMMAND_BUS_MASTER | COMMAND_INTX_DISABLE);
        driver.function().usedBuffer(0);
        assertEquals(0, driver.unclaimedInterrupts());
        cfg().write(COMMAND, 2, COMMAND_MEMORY | COMMAND_BUS_MASTER);
        assertEquals(0, driver.awaitVector());
        assertEquals(ISR_QUEUE, isr());
    }

    @Test
    void vectorOutsideTheTableReadsBackNoVector() {
        open(true);
        // Section 4.1.5.1.2: a mapping the device cannot make reads back as NO_VECTOR (table size 3).
        driver.common(COMMON_CONFIG_MSIX_VECTOR, 2, 3);
        assertEquals(NO_VECTOR, driver.common(COMMON_CONFIG_MSIX_VECTOR, 2));
        driver.common(COMMON_CONFIG_MSIX_VECTOR, 2, 2);
        assertEquals(2, driver.common(COMMON_CONFIG_MSIX_VECTOR, 2));
        driver.common(COMMON_CONFIG_MSIX_VECTOR, 2, 0x7ff);
        assertEquals(NO_VECTOR, driver.common(COMMON_CONFIG_MSIX_VECTOR, 2));
        driver.common(COMMON_QUEUE_SELECT, 2, 1);
        driver.common(COMMON_QUEUE_MSIX_VECTOR, 2, 0x800);
        assertEquals(NO_VECTOR, driver.common(COMMON_QUEUE_MSIX_VECTOR, 2));
        driver.common(COMMON_QUEUE_MSIX_VECTOR, 2, 1);
        assertEquals(1, driver.common(COMMON_QUEUE_MSIX_VECTOR, 2));
        driver.common(COMMON_QUEUE_SELECT, 2, 7);
        assertEquals(NO_VECTOR, driver.common(COMMON_QUEUE_MSIX_VECTOR, 2), "no queue 7");
        // Section 4.1.5.1.2: every event is unmapped on reset; MSI-X itself stays enabled.
        driver.common(COMMON_CONFIG_MSIX_VECTOR, 2, 2);
        driver.writeStatus(0);
        assertEquals(0, driver.readStatus());
        assertEquals(NO_VECTOR, driver.common(COMMON_CONFIG_MSIX_VECTOR, 2));
        driver.common(COMMON_QUEUE_SELECT, 2, 1);
        assertEquals(NO_VECTOR, driver.common(COMMON_QUEUE_MSIX_VECTOR, 2));
        assertNotEquals(0, cfg().read(driver.msixCap + MSIX_MESSAGE_CONTROL, 2) & MSIX_CONTROL_ENABLE);
    }

    @Test
    void notifyAddressIsQueueNotifyOffTimesMultiplier() throws Exception {
        open(true);
        negotiate();
        driver.setUpInterrupts();
        queue(0, 0x1000);
        SplitDriverQueue q1 = queue(1, 0x4000);
        driverOk();
        q1.add(List.of(BufferSpec.writable(0x20000, 1)), false, "n");
        assertTrue(q1.kickPrepare());
        driver.common(COMMON_QUEUE_SELECT, 2, 1);
        long at = driver.common(COMMON_QUEUE_NOTIFY_OFF, 2) * driver.notifyMultiplier;
        assertNotEquals(driver.notifyOffset(0), at, "queues have their own notify addresses");
        // Writes that miss the address, or have the wrong width, decode to nothing (section 4.1.5.2).
        driver.write(CFG_TYPE_NOTIFY, at + 2, 2, 1);
        driver.write(CFG_TYPE_NOTIFY, at, 1, 1);
        assertEquals(0, device.notifies.get());
        // Section 4.1.4.4: cap.offset + queue_notify_off * notify_off_multiplier notifies queue 1.
        driver.write(CFG_TYPE_NOTIFY, at, 2, 1);
        assertEquals(1, device.notifies.get());
        assertEquals(2, driver.awaitVector());
        assertEquals("n", q1.getUsed().token());
    }

    @Test
    void commonConfigurationFieldRules() {
        open(false);
        // Section 4.1.4.3.1: device_feature per select window, 0 beyond bit 63.
        driver.common(COMMON_DEVICE_FEATURE_SELECT, 4, 0);
        assertEquals(VirtioFeatures.RING_EVENT_IDX, driver.common(COMMON_DEVICE_FEATURE, 4));
        driver.common(COMMON_DEVICE_FEATURE_SELECT, 4, 1);
        assertEquals(VirtioFeatures.VERSION_1 >>> 32, driver.common(COMMON_DEVICE_FEATURE, 4));
        driver.common(COMMON_DEVICE_FEATURE_SELECT, 4, 2);
        assertEquals(0, driver.common(COMMON_DEVICE_FEATURE, 4));
        driver.common(COMMON_DRIVER_FEATURE_SELECT, 4, 0);
        driver.common(COMMON_DRIVER_FEATURE, 4, VirtioFeatures.RING_EVENT_IDX);
        assertEquals(VirtioFeatures.RING_EVENT_IDX, driver.common(COMMON_DRIVER_FEATURE, 4));
        // Section 4.1.4.3.2: read-only fields ignore writes.
        driver.common(COMMON_NUM_QUEUES, 2, 9);
        assertEquals(2, driver.common(COMMON_NUM_QUEUES, 2));
        driver.common(COMMON_QUEUE_SELECT, 2, 0);
        assertEquals(0, driver.common(COMMON_QUEUE_NOTIFY_OFF, 2));
        // Section 4.1.4.3.1: queue_size only ever shows 0 or a power of two.
        driver.common(COMMON_QUEUE_SIZE, 2, 6);
        assertEquals(64, driver.common(COMMON_QUEUE_SIZE, 2));
        driver.common(COMMON_QUEUE_SIZE, 2, 128);
        assertEquals(64, driver.common(COMMON_QUEUE_SIZE, 2), "above the maximum");
        driver.common(COMMON_QUEUE_SIZE, 2, 16);
        assertEquals(16, driver.common(COMMON_QUEUE_SIZE, 2));
        // Section 4.1.3.1: a 64-bit field whole or as independent halves.
        driver.common(COMMON_QUEUE_DESC, 8, 0x1234_5678_9abc_d000L);
        assertEquals(0x9abc_d000L, driver.common(COMMON_QUEUE_DESC, 4));
        assertEquals(0x1234_5678L, driver.common(COMMON_QUEUE_DESC + 4, 4));
        driver.common(COMMON_QUEUE_DESC + 4, 4, 0);
        assertEquals(0x9abc_d000L, driver.common(COMMON_QUEUE_DESC, 8));
        // Section 4.1.4.3.2: the driver never writes 0 to queue_enable; the device ignores it.
        driver.common(COMMON_QUEUE_ENABLE, 2, 0);
        assertEquals(0, driver.common(COMMON_QUEUE_ENABLE, 2));
        driver.common(COMMON_QUEUE_ENABLE, 2, 1);
        driver.common(COMMON_QUEUE_ENABLE, 2, 0);
        assertEquals(1, driver.common(COMMON_QUEUE_ENABLE, 2));
        // Section 4.1.3.1: accesses of the wrong width decode to nothing.
        driver.writeStatus(DeviceStatus.ACKNOWLEDGE);
        assertEquals(0, driver.common(COMMON_DEVICE_STATUS, 2));
        assertEquals(DeviceStatus.ACKNOWLEDGE, driver.common(COMMON_DEVICE_STATUS, 1));
        driver.common(COMMON_QUEUE_SELECT, 4, 1);
        assertEquals(0, driver.common(COMMON_QUEUE_SELECT, 2));
        // Neither NOTIF_CONFIG_DATA nor RING_RESET is offered: both fields read 0.
        assertEquals(0, driver.common(COMMON_QUEUE_NOTIFY_DATA, 2));
        assertEquals(0, driver.common(COMMON_QUEUE_RESET, 2));
    }

    @Test
    void pciCfgCapabilityIsAWindowOntoTheBars() {
        open(false);
        // Section 4.1.4.9: cap.bar, cap.offset and cap.length select what pci_cfg_data reads and writes.
        int cap = driver.structures.get(CFG_TYPE_PCI).cap();
        long common = driver.structures.get(CFG_TYPE_COMMON).offset();
        cfg().write(cap + VIRTIO_CAP_BAR, 1, VIRTIO_BAR);
        cfg().write(cap + VIRTIO_CAP_LENGTH, 4, 2);
        cfg().write(cap + VIRTIO_CAP_OFFSET, 4, common + COMMON_NUM_QUEUES);
        assertEquals(2, cfg().read(cap + VIRTIO_CAP_PCI_CFG_DATA, 2));
        cfg().write(cap + VIRTIO_CAP_LENGTH, 4, 4);
        cfg().write(cap + VIRTIO_CAP_OFFSET, 4, common + COMMON_DEVICE_FEATURE_SELECT);
        cfg().write(cap + VIRTIO_CAP_PCI_CFG_DATA, 4, 1);
        assertEquals(1, driver.common(COMMON_DEVICE_FEATURE_SELECT, 4));
        cfg().write(cap + VIRTIO_CAP_OFFSET, 4, common + COMMON_DEVICE_FEATURE);
        assertEquals(VirtioFeatures.VERSION_1 >>> 32, cfg().read(cap + VIRTIO_CAP_PCI_CFG_DATA, 4));
        // A length other than 1, 2 or 4 performs no access.
        cfg().write(cap + VIRTIO_CAP_LENGTH, 4, 3);
        cfg().write(cap + VIRTIO_CAP_OFFSET, 4, common + COMMON_DEVICE_FEATURE_SELECT);
        cfg().write(cap + VIRTIO_CAP_PCI_CFG_DATA, 4, 0);
        assertEquals(1, driver.common(COMMON_DEVICE_FEATURE_SELECT, 4));
        // Other capability fields stay read-only (section 4.1.4: only PCI_CFG's are the driver's).
        int commonCap = driver.structures.get(CFG_TYPE_COMMON).cap();
        cfg().write(commonCap + VIRTIO_CAP_OFFSET, 4, 0x800);
        assertEquals(common, cfg().read(commonCap + VIRTIO_CAP_OFFSET, 4));
    }

    @Test
    void accessesThatDecodeToNothingReadZeroAndAreIgnored() {
        open(false);
        RegisterWindow bar = driver.pci().bar(VIRTIO_BAR);
        long common = driver.structures.get(CFG_TYPE_COMMON).offset();
        bar.write(common + COMMON_CFG_SIZE, 4, 0xffffffffL);
        assertEquals(0, bar.read(common + COMMON_CFG_SIZE, 4));
        assertEquals(0, bar.read(bar.size(), 4));
        assertEquals(0, bar.read(-4, 4));
        assertEquals(0, bar.read(common + COMMON_NUM_QUEUES, 3));
        assertEquals(0, driver.read(CFG_TYPE_NOTIFY, 0, 2), "the notify area reads 0");
        assertEquals(0, driver.read(CFG_TYPE_ISR, 1, 1));
        assertEquals(0, cfg().read(CONFIG_SPACE_SIZE, 4));
        assertEquals(0, cfg().read(0x100, 4), "no PCI Express extended capabilities");
        assertEquals(0, cfg().read(VENDOR_ID, 8), "configuration accesses are at most 4 bytes");
        bar.write(bar.size() - 2, 4, 1);
        assertEquals(0, device.notifies.get());
    }

    @Test
    void maskedVectorIsPendingUntilUnmasked() throws Exception {
        open(true);
        negotiate();
        driver.setUpInterrupts();
        driverOk();
        // PCI 3.0 section 6.8.2.9: a masked vector sets its pending bit instead of sending a message...
        maskVector(0, true);
        driver.function().configChanged();
        assertEquals(0, driver.unclaimedInterrupts());
        assertEquals(1, pba() & 1);
        // ...and the message is sent once it is unmasked.
        maskVector(0, false);
        assertEquals(0, driver.awaitVector());
        assertEquals(0, pba());
        // The same through the Function Mask bit of Message Control.
        cfg().write(driver.msixCap + MSIX_MESSAGE_CONTROL, 2, MSIX_CONTROL_ENABLE | MSIX_CONTROL_FUNCTION_MASK);
        driver.function().configChanged();
        assertEquals(0, driver.unclaimedInterrupts());
        assertEquals(1, pba() & 1);
        cfg().write(driver.msixCap + MSIX_MESSAGE_CONTROL, 2, MSIX_CONTROL_ENABLE);
        assertEquals(0, driver.awaitVector());
        // With MSI-X disabled the device falls back to the ISR and INTx (section 4.1.5.4).
        isr();
        cfg().write(driver.msixCap + MSIX_MESSAGE_CONTROL, 2, 0);
        driver.function().configChanged();
        assertEquals(0, driver.awaitVector());
        assertEquals(ISR_CONFIG, isr());
    }
}
