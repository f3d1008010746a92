package io.kickplug.guest.blk;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.testing.RamDiskDevice;
import io.kickplug.virtio.transport.MmioTransport;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The driver's request path against the real MMIO transport and a RAM disk. */
class VirtioBlkDriverTest {

    private final RamDiskDevice device = new RamDiskDevice(64 << 10, 2, 16, RamDiskDevice.fullFeatures());
    private final MmioTransport transport = new MmioTransport(device, OffHeapGuestMemory.allocate(1 << 20), new VirtqueueFactoryComponent());
    private final VirtioBlkDriver driver = VirtioBlkDriver.boot(transport, new VirtqueueFactoryComponent(),
            BlkDriverConfig.of(4, 4096).withTimeout(Duration.ofSeconds(10)));

    @AfterEach
    void tearDown() {
        driver.close();
        transport.close();
        device.close();
    }

    private List<BlkRequest> awaitAll(int count) {
        List<BlkRequest> done = new ArrayList<>();
        while (done.size() < count) {
            driver.awaitCompletions(done::add);
        }
        return done;
    }

    @Test
    void writeThenReadReturnsTheData() {
        byte[] data = new byte[1024];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 7);
        }
        assertTrue(driver.trySubmit(1, BlkRequest.write(3, data, 1024, "w")));
        assertTrue(awaitAll(1).get(0).ok());
        byte[] back = new byte[1024];
        BlkRequest read = BlkRequest.read(3, back, 1024, "r");
        assertTrue(driver.trySubmit(0, read));
        awaitAll(1);
        assertEquals(VirtioBlk.S_OK, read.status());
        assertEquals(1025, read.usedLength(), "data plus the status byte");
        assertArrayEquals(data, back);
        assertEquals(1, device.handled.get(0));
        assertEquals(1, device.handled.get(1));
    }

    @Test
    void slotsBoundTheRequestsInFlightPerQueue() {
        device.swallow = true;
        // 4 slots over 2 queues: 2 per queue.
        assertTrue(driver.trySubmit(0, BlkRequest.flush(1)));
        assertTrue(driver.trySubmit(0, BlkRequest.flush(2)));
        assertFalse(driver.trySubmit(0, BlkRequest.flush(3)));
        assertTrue(driver.trySubmit(1, BlkRequest.flush(4)));
        assertEquals(3, driver.inFlight());
    }

    @Test
    void deviceNeedsResetFailsEveryOutstandingRequest() {
        // Section 2.1.2: DEVICE_NEEDS_RESET plus a configuration-change interrupt.
        device.swallow = true;
        BlkRequest a = BlkRequest.read(0, new byte[512], 512, "a");
        BlkRequest b = BlkRequest.read(1, new byte[512], 512, "b");
        assertTrue(driver.trySubmit(0, a));
        assertTrue(driver.trySubmit(1, b));
        device.faultSector = 9;
        BlkRequest c = BlkRequest.read(9, new byte[512], 512, "c");
        assertTrue(driver.trySubmit(0, c));
        GuestDriverException e = assertThrows(GuestDriverException.class, () -> driver.awaitCompletions(r -> { }));
        assertTrue(e.getMessage().startsWith("device needs a reset (DEVICE_NEEDS_RESET set"), e.getMessage());
        for (BlkRequest r : List.of(a, b, c)) {
            assertEquals(BlkRequest.DRIVER_FAILED, r.status());
            assertEquals(e.getMessage(), r.error());
        }
        assertThrows(GuestDriverException.class, () -> driver.trySubmit(0, BlkRequest.flush(null)),
                "a broken driver takes no more requests");
    }

    @Test
    void closeFailsRequestsStillInFlight() {
        device.swallow = true;
        BlkRequest a = BlkRequest.write(0, new byte[512], 512, "a");
        assertTrue(driver.trySubmit(0, a));
        driver.close();
        assertEquals(BlkRequest.DRIVER_FAILED, a.status());
        assertEquals("device was reset with the request in flight", a.error());
        assertEquals(0, transport.deviceStatus());
    }

    @Test
    void requestsMustBeWholeSectorsAndFitTheSlot() {
        // Section 5.2.6.1: IN and OUT data is a multiple of 512 bytes.
        assertThrows(IllegalArgumentException.class, () -> BlkRequest.write(0, new byte[1000], 1000, null));
        assertThrows(IllegalArgumentException.class,
                () -> driver.trySubmit(0, BlkRequest.write(0, new byte[8192], 8192, null)));
    }

    @Test
    void waitingWithNothingInFlightIsAnError() {
        assertThrows(IllegalStateException.class, () -> driver.awaitCompletions(r -> { }));
    }
}
