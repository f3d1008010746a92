package io.kickplug.virtio.transport;

import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import static io.kickplug.api.transport.MmioRegisters.*;
import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.SplitDriverQueue;
import io.kickplug.virtio.testkit.EchoDevice;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** virtio-mmio version 2 (VIRTIO 1.2 section 4.2) driven register by register, as a guest would. */
class MmioTransportTest {
    private final OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(1 << 20);
    private final EchoDevice device = new EchoDevice(2, VirtioFeatures.RING_EVENT_IDX);
    private final MmioTransport mmio = new MmioTransport(device, mem, new VirtqueueFactoryComponent());
    private final Semaphore irqs = new Semaphore(0);
    private final AtomicInteger raised = new AtomicInteger();

    @AfterEach
    void tearDown() {
        mmio.close();
        device.close();
    }

    private long r(int off) {
        return mmio.read(off, 4);
    }

    private void w(int off, long v) {
        mmio.write(off, 4, v);
    }

    private long deviceFeatures() {
        w(DEVICE_FEATURES_SEL, 0);
        long lo = r(DEVICE_FEATURES);
        w(DEVICE_FEATURES_SEL, 1);
        return lo | (r(DEVICE_FEATURES) << 32);
    }

    private void writeDriverFeatures(long f) {
        w(DRIVER_FEATURES_SEL, 0);
        w(DRIVER_FEATURES, f & 0xffffffffL);
        w(DRIVER_FEATURES_SEL, 1);
        w(DRIVER_FEATURES, f >>> 32);
    }

    /** Section 3.1.1 steps 1-6; returns the status read back after FEATURES_OK. */
    private int negotiate(long features) {
        w(STATUS, 0);
        assertEquals(0, r(STATUS));
        w(STATUS, DeviceStatus.ACKNOWLEDGE);
        w(STATUS, DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER);
        writeDriverFeatures(features);
        w(STATUS, DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER | DeviceStatus.FEATURES_OK);
        return (int) r(STATUS);
    }

    /** VERSION_1 alone negotiated, then queue 0 (8 entries at 0x1000) set up and ready. */
    private SplitDriverQueue version1WithQueue0() {
        negotiate(VirtioFeatures.VERSION_1);
        return setupQueue(0, 8, 0x1000, VirtioFeatures.VERSION_1);
    }

    private SplitDriverQueue setupQueue(int index, int size, long base, long features) {
        QueueLayout l = QueueLayout.contiguous(size, base);
        SplitDriverQueue q = new SplitDriverQueue(mem, l, features, -1, 0);
        w(QUEUE_SEL, index);
        assertEquals(64, r(QUEUE_NUM_MAX));
        w(QUEUE_NUM, size);
        w(QUEUE_DESC_LOW, l.descTable());
        w(QUEUE_DESC_HIGH, 0);
        w(QUEUE_DRIVER_LOW, l.availRing());
        w(QUEUE_DRIVER_HIGH, 0);
        w(QUEUE_DEVICE_LOW, l.usedRing());
        w(QUEUE_DEVICE_HIGH, 0);
        w(QUEUE_READY, 1);
        assertEquals(1, r(QUEUE_READY));
        return q;
    }

    @Test
    void identificationRegisters() {
        assertEquals(0x74726976L, r(MAGIC_VALUE));
        assertEquals(2, r(VERSION));
        assertEquals(42, r(DEVICE_ID));
        assertEquals(VirtioFeatures.VERSION_1 | VirtioFeatures.RING_EVENT_IDX, deviceFeatures());
        w(QUEUE_SEL, 2);
        assertEquals(0, r(QUEUE_NUM_MAX), "section 4.2.2: 0 for a queue that does not exist");
        assertEquals(0x77, mmio.read(CONFIG + 7, 1));
        assertEquals(0x11, mmio.read(CONFIG, 2));
        assertEquals(0, mmio.read(CONFIG + 8, 1), "config reads past the end return 0");
        assertEquals(0, mmio.read(MAGIC_VALUE, 2), "section 4.2.2.2: control registers are 32-bit only");
    }

    @Test
    void driverWithoutVersion1IsRefusedFeaturesOk() {
        // Sections 3.1.1 / 2.2.2: FEATURES_OK is not kept, so the driver's re-read sees it clear.
        int status = negotiate(VirtioFeatures.RING_EVENT_IDX);
        assertEquals(0, status & DeviceStatus.FEATURES_OK);
        w(STATUS, status | DeviceStatus.DRIVER_OK);
        assertFalse(mmio.function().isActive());
    }

    @Test
    void featuresNotOfferedAreRefused() {
        int status = negotiate(VirtioFeatures.VERSION_1 | VirtioFeatures.RING_INDIRECT_DESC);
        assertEquals(0, status & DeviceStatus.FEATURES_OK);
    }

    @Test
    void fullHandshakeAndOneRequestWithInterrupt() throws Exception {
        mmio.connectInterrupts(v -> {
            raised.incrementAndGet();
            irqs.release();
        });
        long f = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_EVENT_IDX;
        assertEquals(DeviceStatus.FEATURES_OK, negotiate(f) & DeviceStatus.FEATURES_OK);
        SplitDriverQueue q = setupQueue(0, 16, 0x1000, f);
        w(STATUS, r(STATUS) | DeviceStatus.DRIVER_OK);
        assertTrue(mmio.function().isActive());
        q.add(List.of(BufferSpec.readable(0x10000, 16), BufferSpec.writable(0x11000, 1)), false, "t");
        assertTrue(q.kickPrepare());
        w(QUEUE_NOTIFY, 0);
        assertTrue(irqs.tryAcquire(10, TimeUnit.SECONDS));
        assertEquals(INT_USED_BUFFER, r(INTERRUPT_STATUS));
        w(INTERRUPT_ACK, INT_USED_BUFFER);
        assertEquals(0, r(INTERRUPT_STATUS));
        UsedBuffer u = q.getUsed();
        assertEquals("t", u.token());
        assertEquals(0x5a, mem.readU8(0x11000));
    }

    @Test
    void notifyBeforeDriverOkConsumesNothing() {
        SplitDriverQueue q = version1WithQueue0();
        q.add(List.of(BufferSpec.writable(0x11000, 1)), false, "early");
        w(QUEUE_NOTIFY, 0);
        // Section 2.1.2: the device must not consume buffers before DRIVER_OK.
        assertEquals(0, device.notifies.get());
        assertEquals(1, mmio.function().ignoredNotifies());
        assertFalse(q.hasUsed());
    }

    @Test
    void notifyForNonExistentQueueIsIgnored() {
        version1WithQueue0();
        w(STATUS, r(STATUS) | DeviceStatus.DRIVER_OK);
        // QEMU's nxvirtq: writing a queue that does not exist must not crash anything.
        w(QUEUE_SEL, 7);
        w(QUEUE_DESC_LOW, 0xdead0000L);
        w(QUEUE_READY, 1);
        w(QUEUE_NOTIFY, 7);
        w(QUEUE_NOTIFY, 0xffff);
        assertEquals(2, mmio.function().ignoredNotifies());
        assertEquals(0, device.notifies.get());
        assertEquals(0, r(STATUS) & DeviceStatus.DEVICE_NEEDS_RESET);
    }

    @Test
    void badQueueAtDriverOkLatchesNeedsResetWithConfigInterrupt() throws Exception {
        mmio.connectInterrupts(v -> irqs.release());
        version1WithQueue0();
        w(QUEUE_SEL, 0);
        w(QUEUE_READY, 0);
        w(QUEUE_NUM, 6); // not a power of two (section 2.7)
        w(QUEUE_READY, 1);
        w(STATUS, r(STATUS) | DeviceStatus.DRIVER_OK);
        // Section 2.1.2: DEVICE_NEEDS_RESET and, with DRIVER_OK set, a configuration-change notification.
        assertNotEquals(0, r(STATUS) & DeviceStatus.DEVICE_NEEDS_RESET);
        assertTrue(irqs.tryAcquire(10, TimeUnit.SECONDS));
        assertEquals(INT_CONFIG_CHANGE, r(INTERRUPT_STATUS) & INT_CONFIG_CHANGE);
        // Reset (section 2.4) clears everything, the latch included.
        w(STATUS, 0);
        assertEquals(0, r(STATUS));
        assertEquals(0, r(INTERRUPT_STATUS));
        assertEquals(0, r(QUEUE_READY));
    }

    @Test
    void queueConfigurationIsFrozenWhileReady() {
        version1WithQueue0();
        w(QUEUE_NUM, 4);
        assertEquals(8, mmio.function().queue(0).size);
    }

    @Test
    void driverFeaturesAreFrozenAfterFeaturesOk() {
        long f = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_EVENT_IDX;
        negotiate(f);
        writeDriverFeatures(VirtioFeatures.VERSION_1);
        // DriverFeatures is write-only on MMIO: look at what the function kept.
        assertEquals(VirtioFeatures.RING_EVENT_IDX,
                mmio.function().driverFeatureWindow(0) & VirtioFeatures.RING_EVENT_IDX);
        assertEquals(VirtioFeatures.VERSION_1 | VirtioFeatures.RING_EVENT_IDX, mmio.function().negotiatedFeatures());
    }

    @Test
    void resetWaitsForTheDeviceAndClearsQueues() {
        version1WithQueue0();
        w(STATUS, r(STATUS) | DeviceStatus.DRIVER_OK);
        w(STATUS, 0);
        assertEquals(1, device.resets);
        assertFalse(mmio.function().isActive());
        w(QUEUE_SEL, 0);
        assertEquals(0, r(QUEUE_READY));
    }

    @Test
    void configGenerationAdvancesOnConfigChange() throws Exception {
        mmio.connectInterrupts(v -> irqs.release());
        long f = VirtioFeatures.VERSION_1;
        negotiate(f);
        w(STATUS, r(STATUS) | DeviceStatus.DRIVER_OK);
        long g = r(CONFIG_GENERATION);
        mmio.function().configChanged();
        assertEquals(g + 1, r(CONFIG_GENERATION));
        assertTrue(irqs.tryAcquire(10, TimeUnit.SECONDS));
        assertEquals(INT_CONFIG_CHANGE, r(INTERRUPT_STATUS));
    }

    @Test
    void queueLargerThanQueueNumMaxLatchesNeedsReset() {
        long f = VirtioFeatures.VERSION_1;
        negotiate(f);
        w(QUEUE_SEL, 0);
        w(QUEUE_NUM, 128); // QueueNumMax is 64 (section 4.2.2.2: the driver MUST NOT exceed it)
        w(QUEUE_DESC_LOW, 0x1000);
        w(QUEUE_DRIVER_LOW, 0x3000);
        w(QUEUE_DEVICE_LOW, 0x4000);
        w(QUEUE_READY, 1);
        w(STATUS, r(STATUS) | DeviceStatus.DRIVER_OK);
        assertNotEquals(0, r(STATUS) & DeviceStatus.DEVICE_NEEDS_RESET);
        assertFalse(mmio.function().isActive());
    }
}
