package io.kickplug.guest.virtio;

import static io.kickplug.api.transport.MmioRegisters.*;
import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.testing.FakeMmioDevice;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The driver's initialization against a scripted register window (VIRTIO 1.2 sections 3.1.1, 2.2.2, 4.2.3). */
class DriverHandshakeTest {
    private static final int ACK = DeviceStatus.ACKNOWLEDGE;
    private static final int DRV = DeviceStatus.DRIVER;
    private static final int FOK = DeviceStatus.FEATURES_OK;
    private static final int DOK = DeviceStatus.DRIVER_OK;
    private static final int FAILED = DeviceStatus.FAILED;

    private FakeMmioDevice fake;
    private final VirtqueueFactoryComponent queues = new VirtqueueFactoryComponent();
    private final DriverConfig config = DriverHarness.config(Integer.MAX_VALUE, 8, Duration.ofMillis(500));
    private final java.util.concurrent.atomic.AtomicInteger raised = new java.util.concurrent.atomic.AtomicInteger();

    private VirtioBlkDriver boot(DriverConfig c) {
        return VirtioBlkDriver.boot("d", fake, queues, c, vector -> raised.incrementAndGet(),
                new io.kickplug.guest.lock.LockRegistry());
    }

    /** Booting with {@code c} fails with a {@link GuestDriverException} whose message contains every part. */
    private void assertBootFails(DriverConfig c, String... parts) {
        String message = assertThrows(GuestDriverException.class, () -> boot(c)).getMessage();
        for (String part : parts) {
            assertTrue(message.contains(part), message);
        }
    }

    @BeforeEach
    void setUp() {
        fake = new FakeMmioDevice(OffHeapGuestMemory.allocate(1 << 20));
        fake.offeredFeatures = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_FLUSH;
        fake.setCapacity(2048);
    }

    @Test
    void statusIsWrittenInTheOrderOfSection311() {
        try (VirtioBlkDriver driver = boot(config)) {
            // 3.1.1: reset, ACKNOWLEDGE, DRIVER, (features), FEATURES_OK, (queues), DRIVER_OK.
            assertEquals(List.of(0, ACK, ACK | DRV, ACK | DRV | FOK, ACK | DRV | FOK | DOK), fake.statusWrites);
            assertEquals(2048, driver.capacitySectors());
            assertNotNull(fake.interrupts, "interrupts are connected before DRIVER_OK");
        }
    }

    @Test
    void driverFeaturesAreWrittenBeforeFeaturesOkAndQueuesBeforeDriverOk() {
        try (VirtioBlkDriver driver = boot(config)) {
            int featuresOk = fake.positionOfStatus(ACK | DRV | FOK);
            int driverOk = fake.positionOfStatus(ACK | DRV | FOK | DOK);
            List<Integer> featureWrites = fake.positionsOf(DRIVER_FEATURES);
            assertEquals(2, featureWrites.size(), "both 32-bit halves are written (section 4.2.2)");
            assertTrue(featureWrites.get(1) < featuresOk);
            assertTrue(fake.positionOfStatus(ACK | DRV) < featureWrites.get(0));
            List<Integer> ready = fake.positionsOf(QUEUE_READY);
            assertEquals(1, ready.size());
            assertTrue(featuresOk < fake.positionsOf(QUEUE_NUM).get(0), "queues are set up after FEATURES_OK");
            assertTrue(fake.positionsOf(QUEUE_DEVICE_HIGH).get(0) < ready.get(0), "addresses before QueueReady");
            assertTrue(ready.get(0) < driverOk, "QueueReady before DRIVER_OK");
            assertTrue(fake.queueReady[0]);
            assertEquals(1, driver.queueCount());
        }
    }

    @Test
    void queueRegistersDescribeAContiguousAlignedLayout() {
        try (VirtioBlkDriver driver = boot(config)) {
            assertEquals(256, fake.queueNum[0]);
            QueueLayout expected = QueueLayout.contiguous(256, fake.desc[0]);
            assertEquals(0, fake.desc[0] % 16, "descriptor table is 16-byte aligned (section 2.7)");
            assertEquals(expected.availRing(), fake.driver[0]);
            assertEquals(expected.usedRing(), fake.device[0]);
            assertEquals(1, driver.queueCount());
            assertEquals(8, driver.queue(0).slots());
        }
    }

    @Test
    void acceptsOnlyOfferedFeaturesTheDriverSupports() {
        fake.offeredFeatures = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_PACKED | VirtioFeatures.RING_INDIRECT_DESC
                | VirtioBlk.F_DISCARD | VirtioBlk.F_RO | VirtioBlk.F_BLK_SIZE;
        fake.config.putInt(VirtioBlk.CFG_BLK_SIZE, 4096);
        try (VirtioBlkDriver driver = boot(config)) {
            long expected = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_INDIRECT_DESC | VirtioBlk.F_RO
                    | VirtioBlk.F_BLK_SIZE;
            assertEquals(expected, fake.driverFeatures);
            assertEquals(expected, driver.features());
            assertTrue(driver.readOnly());
            assertEquals(4096, driver.blkSize());
        }
    }

    @Test
    void featuresOkNotKeptSetsFailedAndThrows() {
        // Sections 3.1.1 step 6 and 2.2.2: the device refuses the subset by leaving FEATURES_OK clear.
        fake.keepFeaturesOk = false;
        assertBootFails(config, "did not keep FEATURES_OK", "3.1.1");
        assertEquals(List.of(0, ACK, ACK | DRV, ACK | DRV | FOK, ACK | DRV | FAILED), fake.statusWrites);
        assertTrue(fake.positionsOf(QUEUE_READY).isEmpty(), "no queue is set up");
        assertNull(fake.interrupts);
    }

    @Test
    void deviceWithoutVersion1IsRefused() {
        // Section 6: this driver has no legacy interface, so it needs VIRTIO_F_VERSION_1.
        fake.offeredFeatures = VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_FLUSH;
        assertBootFails(config, "without VIRTIO_F_VERSION_1");
        assertEquals(List.of(0, ACK, ACK | DRV, ACK | DRV | FAILED), fake.statusWrites);
        assertFalse(fake.driverFeaturesWritten, "no features are written to a legacy device");
    }

    @Test
    void wrongMagicIsIgnoredWithoutTouchingStatus() {
        // Section 4.2.3.1.1: the driver MUST ignore a device with a wrong MagicValue.
        fake.magic = 0x12345678;
        assertBootFails(config, "MagicValue is 0x12345678");
        assertTrue(fake.writes.isEmpty());
    }

    @Test
    void legacyVersionAndWrongDeviceAreRefused() {
        fake.version = 1;
        assertBootFails(config, "Version 1 is not supported");
        fake.version = 2;
        fake.deviceId = 0;
        assertBootFails(config, "placeholder");
        assertTrue(fake.statusWrites.isEmpty());
    }

    @Test
    void resetIsReadBackUntilZero() {
        fake.status = ACK;
        fake.resetLagReads = 5;
        try (VirtioBlkDriver driver = boot(config)) {
            assertEquals(ACK | DRV | FOK | DOK, fake.status);
            assertEquals(2048, driver.capacitySectors());
        }
    }

    @Test
    void resetThatNeverCompletesFailsWithinTheTimeout() {
        fake.resetLagReads = Integer.MAX_VALUE;
        assertBootFails(config, "did not complete its reset");
    }

    @Test
    void closeResetsTheDeviceAndDisconnectsInterrupts() {
        VirtioBlkDriver driver = boot(config);
        driver.close();
        assertEquals(0, fake.statusWrites.get(fake.statusWrites.size() - 1));
        assertEquals(0, fake.status);
        assertNull(fake.interrupts);
        driver.close(); // idempotent
        assertThrows(GuestDriverException.class, driver::checkUsable, "a closed driver takes no requests");
    }

    @Test
    void capacityIsReadAgainWhenConfigGenerationMoves() {
        // Sections 2.5 and 4.2.2.2: a read that straddles a config change is repeated.
        fake.tornCapacityReads = 2;
        try (VirtioBlkDriver driver = boot(config)) {
            assertEquals(2048 + 16, driver.capacitySectors());
        }
    }

    @Test
    void usesAsManyQueuesAsTheDeviceHasUpToNumQueues() {
        fake.offeredFeatures |= VirtioBlk.F_MQ;
        fake.setNumQueues(4);
        fake.queueNumMax = new int[] {64, 64, 64};
        try (VirtioBlkDriver driver = boot(config)) {
            assertEquals(3, driver.queueCount());
            assertEquals(8, driver.queue(2).slots(), "8 slots per queue");
            assertEquals(List.of(true, true, true, false),
                    List.of(fake.queueReady[0], fake.queueReady[1], fake.queueReady[2], fake.queueReady[3]));
        }
    }

    @Test
    void missingQueueZeroFailsTheDevice() {
        fake.queueNumMax = new int[] {0};
        assertBootFails(config, "QueueNumMax of queue 0 is 0");
        assertEquals(ACK | DRV | FOK | FAILED, fake.statusWrites.get(fake.statusWrites.size() - 1));
        assertNull(fake.interrupts);
    }

    @Test
    void queueSizeThatIsNotAPowerOfTwoIsRefused() {
        // Section 2.7: split virtqueue sizes are powers of two.
        fake.queueNumMax = new int[] {100};
        assertBootFails(config, "QueueNumMax 100");
    }

    @Test
    void guestMemoryTooSmallForTheSlotsIsAClearError() {
        // A ring of 32768 (832 KiB) and a header per slot (512 KiB) do not fit 1 MiB of guest memory.
        fake.queueNumMax = new int[] {32768};
        DriverConfig huge = DriverHarness.config(1, 0, Duration.ofMillis(500));
        assertBootFails(huge, "guest memory exhausted");
        assertEquals(ACK | DRV | FOK | FAILED, fake.statusWrites.get(fake.statusWrites.size() - 1));
    }
}
