package io.kickplug.guest.workload;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.testing.Closer;
import io.kickplug.guest.testing.MemoryDisk;
import io.kickplug.guest.testing.RamDiskDevice;
import io.kickplug.api.transport.TransportInstance;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import java.time.Duration;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.guest.testing.ForwardingGuestPort;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The simulated guest against the real virtio-mmio transport and split virtqueues, with a small in-test
 * RAM disk device behind them: registers, guest memory and interrupts only. {@link WriteReadVerifyPciTest}
 * runs every test again on virtio-pci.
 */
class WriteReadVerifyEndToEndTest {
    private static final int CAPACITY = 1 << 20;

    @RegisterExtension
    final Closer opened = new Closer();
    private RamDiskDevice device;
    private TransportInstance transport;

    /** The transport the tests run on. */
    TransportKind kind() {
        return TransportKind.MMIO;
    }

    private TransportInstance start(int queues, int queueSize, long features) {
        device = opened.add(new RamDiskDevice(CAPACITY, queues, queueSize, features));
        transport = MemoryDisk.transport(opened, kind(), device, OffHeapGuestMemory.allocate(8 << 20));
        return transport;
    }

    private IoPassResult pass(IoPassOptions options, long seed, Duration timeout) {
        return new WriteReadVerifyPass("d1", transport.port(), new VirtqueueFactoryComponent(), options, seed, timeout)
                .run();
    }

    private IoPassResult pass(IoPassOptions options) {
        return pass(options, 7, Duration.ofSeconds(30));
    }

    @Test
    void writesReadsAndVerifiesTheWholeDisk() {
        start(1, 256, RamDiskDevice.fullFeatures());
        IoPassResult r = pass(new IoPassOptions(4096, 32, 0));
        assertEquals(2 * CAPACITY / 4096, r.requests());
        assertEquals(2L * CAPACITY, r.bytes());
        assertEquals(0, r.mismatches());
        assertTrue(r.interrupts() > 0);
        assertTrue(r.notifies() > 0 && r.notifies() <= r.requests() + 1);
        assertTrue(r.elapsedNanos() > 0);
        assertEquals(0, transport.deviceStatus(), "the device is reset at the end");
        // The pattern really reached the disk: block 1 holds its own pattern.
        byte[] expected = new byte[4096];
        new BlockPattern(7).fill(1, expected, 4096);
        assertArrayEquals(expected, java.util.Arrays.copyOfRange(device.disk, 4096, 8192));
    }

    @Test
    void interruptsAreConnectedForThePassAndDisconnectedAfterIt() {
        start(1, 256, RamDiskDevice.fullFeatures());
        List<GuestInterrupts> connected = new ArrayList<>();
        GuestPort recording = new ForwardingGuestPort(transport.port()) {
            @Override
            public void connectInterrupts(GuestInterrupts interrupts) {
                connected.add(interrupts);
                super.connectInterrupts(interrupts);
            }
        };
        IoPassResult r = new WriteReadVerifyPass("d1", recording, new VirtqueueFactoryComponent(),
                new IoPassOptions(4096, 4, 64 << 10), 7, Duration.ofSeconds(30)).run();
        assertEquals(0, r.mismatches());
        assertEquals(2, connected.size(), connected.toString());
        assertNotNull(connected.get(0));
        assertNull(connected.get(1), "disconnected at the end");
    }

    @Test
    void spreadsRequestsOverAllQueues() {
        start(4, 64, RamDiskDevice.fullFeatures());
        IoPassResult r = pass(new IoPassOptions(4096, 16, 256 << 10));
        assertEquals(0, r.mismatches());
        for (int q = 0; q < 4; q++) {
            assertTrue(device.handled.get(q) > 0, "queue " + q + " served requests");
        }
    }

    @Test
    void worksWithoutIndirectDescriptorsOrEventIdxAndADepthAboveAThirdOfTheQueue() {
        // 3-descriptor chains in an 8-entry queue: only 2 fit at once, whatever the depth asks.
        start(1, 8, VirtioFeatures.VERSION_1);
        IoPassResult r = pass(new IoPassOptions(512, 8, 64 << 10));
        assertEquals(2 * (64 << 10) / 512, r.requests());
        assertEquals(0, r.mismatches());
    }

    @Test
    void lastRequestIsShortWhenTheTotalIsNotAMultipleOfTheBlockSize() {
        start(1, 256, RamDiskDevice.fullFeatures());
        IoPassResult r = pass(new IoPassOptions(4096, 8, 4096 * 3 + 1024));
        assertEquals(8, r.requests());
        assertEquals(0, r.mismatches());
    }

    @Test
    void countsCorruptedBlocks() {
        start(1, 256, RamDiskDevice.fullFeatures());
        device.corruptReadSector = 16; // block 2 of 4096 bytes
        IoPassResult r = pass(new IoPassOptions(4096, 8, 64 << 10));
        assertEquals(1, r.mismatches());
    }

    @Test
    void anotherSeedWritesOtherData() {
        start(1, 256, RamDiskDevice.fullFeatures());
        pass(new IoPassOptions(4096, 8, 8192), 1, Duration.ofSeconds(30));
        byte[] first = java.util.Arrays.copyOf(device.disk, 8192);
        pass(new IoPassOptions(4096, 8, 8192), 2, Duration.ofSeconds(30));
        assertFalse(java.util.Arrays.equals(first, java.util.Arrays.copyOf(device.disk, 8192)));
    }

    @Test
    void ioErrorFailsThePassWithTheRequestNamed() {
        start(1, 256, RamDiskDevice.fullFeatures());
        device.ioErrorSector = 8;
        GuestDriverException e = assertThrows(GuestDriverException.class,
                () -> pass(new IoPassOptions(4096, 4, 64 << 10)));
        assertEquals("write of 4096 bytes at sector 8 failed: status IOERR", e.getMessage());
        assertEquals(0, transport.deviceStatus(), "the device is reset after a failure too");
    }

    @Test
    void deviceNeedsResetFailsOutstandingRequestsInsteadOfHanging() {
        // Section 2.1.2: DEVICE_NEEDS_RESET comes with a configuration-change interrupt.
        start(1, 256, RamDiskDevice.fullFeatures());
        device.faultSector = 24;
        GuestDriverException e = assertThrows(GuestDriverException.class,
                () -> pass(new IoPassOptions(4096, 8, 64 << 10), 7, Duration.ofSeconds(30)));
        assertTrue(e.getMessage().contains("DEVICE_NEEDS_RESET"), e.getMessage());
        assertTrue(e.getMessage().contains("2.1.2"), e.getMessage());
        assertEquals(0, transport.deviceStatus());
    }

    @Test
    void deviceThatNeverCompletesTimesOut() {
        start(1, 256, RamDiskDevice.fullFeatures());
        device.swallow = true;
        GuestDriverException e = assertThrows(GuestDriverException.class,
                () -> pass(new IoPassOptions(4096, 4, 64 << 10), 7, Duration.ofMillis(300)));
        assertTrue(e.getMessage().startsWith("no completion within 300 ms (4 requests in flight"), e.getMessage());
        assertEquals(0, transport.deviceStatus());
    }

    @Test
    void badOptionsAreRefused() {
        start(1, 64, RamDiskDevice.fullFeatures());
        assertEquals("block size 1000 must be a positive multiple of 512 (VIRTIO 1.2 section 5.2.6.1)",
                assertThrows(IllegalArgumentException.class, () -> pass(new IoPassOptions(1000, 1, 0))).getMessage());
        assertEquals("queue depth 0 must be at least 1",
                assertThrows(IllegalArgumentException.class, () -> pass(new IoPassOptions(512, 0, 0))).getMessage());
        assertEquals("queue depth 65 exceeds the queue size 64 of disk 'd1'",
                assertThrows(IllegalArgumentException.class, () -> pass(new IoPassOptions(512, 65, 0))).getMessage());
        assertEquals("total size 2097152 exceeds the capacity 1048576 bytes of disk 'd1'",
                assertThrows(IllegalArgumentException.class,
                        () -> pass(new IoPassOptions(512, 4, 2 << 20))).getMessage());
        assertEquals(0, transport.deviceStatus(), "a refused pass leaves the device reset");
    }

    @Test
    void flushIsSentWhenOffered() {
        start(1, 256, VirtioFeatures.VERSION_1 | VirtioBlk.F_FLUSH);
        IoPassResult r = pass(new IoPassOptions(4096, 4, 16 << 10));
        // 4 writes + 1 flush + 4 reads reached the device; the flush is not counted as I/O.
        assertEquals(9, device.handled.get(0));
        assertEquals(8, r.requests());
    }
}
