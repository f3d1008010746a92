package io.kickplug.virtio.transport;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.util.Arrays;
import java.util.stream.Stream;
import io.kickplug.virtio.testkit.Closing;
import io.kickplug.virtio.testkit.EchoDevice;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The transport-independent rules (device status 2.1, features 2.2, reset 2.4, configuration 2.5,
 * initialisation 3.1.1), driven register by register through virtio-mmio (4.2), virtio-pci with INTx and
 * virtio-pci with MSI-X (4.1), each with split rings (2.7) and with packed rings (2.8, VIRTIO_F_RING_PACKED
 * offered and accepted).
 */
class TransportContractTest {
    enum Kind {
        MMIO, PCI_INTX, PCI_MSIX;

        TestDriver open(VirtioDevice device, GuestMemory memory) {
            return switch (this) {
                case MMIO -> new MmioTestDriver(device, memory, RINGS);
                case PCI_INTX -> new PciTestDriver(device, memory, false, RINGS);
                case PCI_MSIX -> new PciTestDriver(device, memory, true, RINGS);
            };
        }
    }

    /** Both ring bundles behind the transports, as in the runtime. */
    private static final VirtqueueFactory RINGS =
            RingSelector.of(new VirtqueueFactoryComponent(), new PackedVirtqueueFactoryComponent());

    /** Every transport with each ring format. */
    static Stream<Arguments> cases() {
        return Arrays.stream(Kind.values())
                .flatMap(k -> Arrays.stream(RingFormat.values()).map(r -> Arguments.of(k, r)));
    }

    private static final long EVENT_IDX = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_EVENT_IDX;

    private final OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(1 << 20);
    private EchoDevice device;
    private TestDriver driver;
    private RingFormat ring;

    @AfterEach
    void tearDown() throws Exception {
        Closing.inOrder(driver, device);
    }

    /** The device offers the ring format's feature (packed: VIRTIO_F_RING_PACKED) and the driver accepts it. */
    private void open(Kind kind, RingFormat format) {
        ring = format;
        device = new EchoDevice(2, VirtioFeatures.RING_EVENT_IDX | format.feature());
        driver = kind.open(device, mem);
    }

    /** Section 3.1.1 steps 1-6 (with the ring format's feature); returns the status read back after FEATURES_OK. */
    private int negotiate(long features) {
        driver.writeStatus(0);
        assertEquals(0, driver.readStatus());
        driver.writeStatus(DeviceStatus.ACKNOWLEDGE);
        driver.writeStatus(DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER);
        driver.writeDriverFeatures(features | ring.feature());
        driver.writeStatus(DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER | DeviceStatus.FEATURES_OK);
        return driver.readStatus();
    }

    /** Opens the transport, negotiates VERSION_1 alone (section 3.1.1 steps 1-6) and sets up interrupts. */
    private void openVersion1(Kind kind, RingFormat format) {
        open(kind, format);
        negotiate(VirtioFeatures.VERSION_1);
        driver.setUpInterrupts();
    }

    /** Section 3.1.1 step 7: queue discovery and setup. */
    private DriverQueue setUpQueue(int index, int size, long base, long features) {
        assertEquals(64, driver.queueMaxSize(index));
        QueueLayout l = ring.layout(size, base);
        driver.setUpQueue(index, l);
        assertTrue(driver.queueEnabled(index));
        return RINGS.createDriverQueue(mem, l, features | ring.feature(), -1, 0);
    }

    private void driverOk() {
        driver.writeStatus(driver.readStatus() | DeviceStatus.DRIVER_OK);
    }

    private void roundTrip(DriverQueue q, int index, long buffer, String token) throws Exception {
        q.add(List.of(BufferSpec.readable(buffer, 16), BufferSpec.writable(buffer + 0x1000, 1)), false, token);
        assertTrue(q.kickPrepare(), "section 2.7.10: the device wants this notification");
        driver.notifyQueue(index);
        driver.awaitQueueInterrupt(index);
        UsedBuffer u = q.getUsed();
        assertEquals(token, u.token());
        assertEquals(0x5a, mem.readU8(buffer + 0x1000));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void featuresQueueSizesAndDeviceConfiguration(Kind kind, RingFormat format) {
        open(kind, format);
        // Section 3.1.1 step 4 (4.2.2 DeviceFeatures, 4.1.4.3.1 device_feature per select window).
        assertEquals(EVENT_IDX | format.feature(), driver.deviceFeatures());
        // Sections 4.2.2 / 4.1.4.3.1: a queue that does not exist has size 0.
        assertEquals(64, driver.queueMaxSize(1));
        assertEquals(0, driver.queueMaxSize(2));
        // Section 2.5: device-specific configuration, little-endian; reads past its end return 0.
        assertEquals(0x77, driver.readDeviceConfig(7, 1));
        assertEquals(0x11, driver.readDeviceConfig(0, 2));
        assertEquals(0, driver.readDeviceConfig(8, 1));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void fullHandshakeAndRequestsOnBothQueuesWithInterrupts(Kind kind, RingFormat format) throws Exception {
        open(kind, format);
        // Section 3.1.1, then a used-buffer notification per request (4.2.3.4, 4.1.5.3).
        assertEquals(DeviceStatus.FEATURES_OK, negotiate(EVENT_IDX) & DeviceStatus.FEATURES_OK);
        driver.setUpInterrupts();
        DriverQueue q0 = setUpQueue(0, 16, 0x1000, EVENT_IDX);
        DriverQueue q1 = setUpQueue(1, 8, 0x4000, EVENT_IDX);
        driverOk();
        assertTrue(driver.function().isActive());
        assertEquals(EVENT_IDX | format.feature(), driver.function().negotiatedFeatures());
        roundTrip(q0, 0, 0x10000, "a");
        roundTrip(q1, 1, 0x20000, "b");
        roundTrip(q0, 0, 0x30000, "c");
        assertEquals(3, device.completed.get());
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void driverWithoutVersion1IsRefusedFeaturesOk(Kind kind, RingFormat format) {
        open(kind, format);
        // Sections 2.2.2, 3.1.1 step 6 and 6: FEATURES_OK is not kept without VERSION_1.
        int status = negotiate(VirtioFeatures.RING_EVENT_IDX);
        assertEquals(0, status & DeviceStatus.FEATURES_OK);
        driver.writeStatus(status | DeviceStatus.DRIVER_OK);
        assertFalse(driver.function().isActive());
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void featuresNotOfferedAreRefused(Kind kind, RingFormat format) {
        open(kind, format);
        // Section 2.2.2: the device MUST NOT accept a feature it did not offer.
        int status = negotiate(VirtioFeatures.VERSION_1 | VirtioFeatures.RING_INDIRECT_DESC);
        assertEquals(0, status & DeviceStatus.FEATURES_OK);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void notifyBeforeDriverOkConsumesNothing(Kind kind, RingFormat format) {
        openVersion1(kind, format);
        DriverQueue q = setUpQueue(0, 8, 0x1000, VirtioFeatures.VERSION_1);
        q.add(List.of(BufferSpec.writable(0x11000, 1)), false, "early");
        driver.notifyQueue(0);
        // Section 2.1.2: the device must not consume buffers before DRIVER_OK.
        assertEquals(0, device.notifies.get());
        assertEquals(1, driver.function().ignoredNotifies());
        assertFalse(q.hasUsed());
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void nonExistentQueueIsHarmless(Kind kind, RingFormat format) throws Exception {
        openVersion1(kind, format);
        DriverQueue q = setUpQueue(0, 8, 0x1000, VirtioFeatures.VERSION_1);
        driverOk();
        // QEMU's nxvirtq: configuring and notifying a queue that does not exist changes nothing
        // (sections 4.2.2 and 4.1.4.3.1: its size reads 0).
        assertEquals(0, driver.queueMaxSize(7));
        driver.setUpQueue(7, QueueLayout.contiguous(8, 0xdead0000L));
        assertFalse(driver.queueEnabled(7));
        driver.notifyQueue(7);
        assertEquals(0, device.notifies.get());
        assertEquals(1, driver.function().ignoredNotifies());
        assertEquals(0, driver.readStatus() & DeviceStatus.DEVICE_NEEDS_RESET);
        roundTrip(q, 0, 0x10000, "still works");
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void ringOutsideGuestMemoryLatchesNeedsResetWithConfigInterrupt(Kind kind, RingFormat format) throws Exception {
        openVersion1(kind, format);
        // Above 4 GiB: both halves of each 64-bit ring address are written, and it is not guest memory.
        QueueLayout outside = format.layout(8, 0x1_0000_0000L);
        driver.setUpQueue(0, outside);
        assertEquals(outside.descTable(), driver.function().queue(0).desc);
        driverOk();
        // Section 2.1.2: DEVICE_NEEDS_RESET and, with DRIVER_OK set, a configuration-change notification.
        assertNotEquals(0, driver.readStatus() & DeviceStatus.DEVICE_NEEDS_RESET);
        assertFalse(driver.function().isActive());
        driver.awaitConfigInterrupt();
        // Section 2.4: reset clears the latch.
        driver.writeStatus(0);
        assertEquals(0, driver.readStatus());
        assertFalse(driver.function().needsReset());
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void resetWaitsForTheDeviceAndClearsQueuesAndInterruptCause(Kind kind, RingFormat format) {
        openVersion1(kind, format);
        setUpQueue(0, 8, 0x1000, VirtioFeatures.VERSION_1);
        driverOk();
        driver.function().configChanged(); // leaves a cause pending: nobody reads it
        driver.writeStatus(0);
        // Sections 2.4.1, 4.2.2.1 and 4.1.4.3.1: status reads 0 once reset is done, queues are disabled and
        // the interrupt cause (InterruptStatus / ISR) is clear.
        assertEquals(0, driver.readStatus());
        assertEquals(1, device.resets);
        assertFalse(driver.function().isActive());
        assertFalse(driver.queueEnabled(0));
        assertEquals(0, driver.takeInterruptCause());
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void queueConfigurationIsFrozenWhileEnabled(Kind kind, RingFormat format) {
        openVersion1(kind, format);
        setUpQueue(0, 8, 0x1000, VirtioFeatures.VERSION_1);
        // Sections 4.2.2.2 and 4.1.4.3.2: queue fields are written before the queue is enabled.
        driver.setUpQueue(0, QueueLayout.contiguous(4, 0x8000));
        assertEquals(8, driver.function().queue(0).size);
        assertEquals(0x1000, driver.function().queue(0).desc);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void configGenerationAdvancesWithConfigInterrupt(Kind kind, RingFormat format) throws Exception {
        openVersion1(kind, format);
        driverOk();
        int g = driver.configGeneration();
        driver.function().configChanged();
        // Sections 2.5, 4.2.2.1 and 4.1.4.3.1: the generation changes; then a configuration-change
        // notification (4.2.3.4, 4.1.5.4).
        assertNotEquals(g, driver.configGeneration());
        driver.awaitConfigInterrupt();
    }
}
