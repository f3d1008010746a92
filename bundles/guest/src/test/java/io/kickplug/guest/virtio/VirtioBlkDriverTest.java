package io.kickplug.guest.virtio;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.testing.RamDiskDevice;
import io.kickplug.virtio.transport.MmioTransport;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The driver's request path against the real MMIO transport and a RAM disk. */
class VirtioBlkDriverTest {

    private final RamDiskDevice device = new RamDiskDevice(64 << 10, 2, 16, RamDiskDevice.fullFeatures());
    private final MmioTransport transport = new MmioTransport(device, OffHeapGuestMemory.allocate(1 << 20),
            new VirtqueueFactoryComponent());
    private final DriverHarness guest = DriverHarness.boot(transport, new VirtqueueFactoryComponent(),
            DriverHarness.config(2, 2, Duration.ofSeconds(10)));
    private final VirtioBlkDriver driver = guest.driver();

    @AfterEach
    void tearDown() {
        guest.close();
        transport.close();
        device.close();
    }

    private List<DriverHarness.Request> awaitAll(int count) throws InterruptedException {
        List<DriverHarness.Request> done = new ArrayList<>();
        while (done.size() < count) {
            guest.awaitCompletions(done::add);
        }
        return done;
    }

    private DriverHarness.Request flush(int queue) {
        return guest.trySubmit(queue, VirtioBlk.T_FLUSH, 0, null, 0);
    }

    @Test
    void writeThenReadReturnsTheData() throws InterruptedException {
        byte[] data = new byte[1024];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 7);
        }
        assertNotNull(guest.trySubmit(1, VirtioBlk.T_OUT, 3, data, 1024));
        assertEquals(VirtioBlk.S_OK, awaitAll(1).get(0).slot().result());
        byte[] back = new byte[1024];
        DriverHarness.Request read = guest.trySubmit(0, VirtioBlk.T_IN, 3, back, 1024);
        assertNotNull(read);
        awaitAll(1);
        assertEquals(VirtioBlk.S_OK, read.slot().result());
        assertEquals(1025, read.slot().usedLength(), "data plus the status byte");
        assertArrayEquals(data, back);
        assertEquals(1, device.handled.get(0));
        assertEquals(1, device.handled.get(1));
    }

    @Test
    void slotsBoundTheRequestsInFlightPerQueue() {
        device.swallow = true;
        // 2 slots per queue.
        assertNotNull(flush(0));
        assertNotNull(flush(0));
        assertNull(flush(0));
        assertNotNull(flush(1));
        assertEquals(3, driver.inDevice());
        assertEquals(2, driver.queue(0).slots());
    }

    @Test
    void deviceNeedsResetFailsEveryOutstandingRequest() {
        // Section 2.1.2: DEVICE_NEEDS_RESET plus a configuration-change interrupt.
        device.swallow = true;
        DriverHarness.Request a = guest.trySubmit(0, VirtioBlk.T_IN, 0, new byte[512], 512);
        DriverHarness.Request b = guest.trySubmit(1, VirtioBlk.T_IN, 1, new byte[512], 512);
        assertNotNull(a);
        assertNotNull(b);
        device.faultSector = 9;
        DriverHarness.Request c = guest.trySubmit(0, VirtioBlk.T_IN, 9, new byte[512], 512);
        assertNotNull(c);
        GuestDriverException e = assertThrows(GuestDriverException.class, () -> guest.awaitCompletions(r -> { }));
        assertTrue(e.getMessage().startsWith("device needs a reset (DEVICE_NEEDS_RESET set"), e.getMessage());
        for (DriverHarness.Request r : List.of(a, b, c)) {
            assertEquals(RequestSlot.DRIVER_FAILED, r.slot().result());
            assertEquals(e.getMessage(), r.slot().error());
        }
        assertThrows(GuestDriverException.class, () -> flush(0), "a broken driver takes no more requests");
    }

    @Test
    void closeFailsRequestsStillInFlight() {
        device.swallow = true;
        DriverHarness.Request a = guest.trySubmit(0, VirtioBlk.T_OUT, 0, new byte[512], 512);
        assertNotNull(a);
        driver.close();
        assertEquals(RequestSlot.DRIVER_FAILED, a.slot().result());
        assertEquals("device was reset with the request in flight", a.slot().error());
        assertEquals(0, transport.deviceStatus());
    }

    @Test
    void aSlotInTheDeviceCannotBePreparedAgain() {
        device.swallow = true;
        DriverHarness.Request a = flush(0);
        assertThrows(IllegalStateException.class, () -> a.slot().prepare(VirtioBlk.T_FLUSH, 0, List.of(), false, null));
    }

    @Test
    void waitingWithNothingInFlightIsAnError() {
        assertThrows(IllegalStateException.class, () -> guest.awaitCompletions(r -> { }));
    }
}
