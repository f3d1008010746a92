package io.kickplug.guest.transport;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.testing.RamDiskDevice;
import io.kickplug.guest.testing.TamperedPciPort;
import io.kickplug.guest.virtio.DriverHarness;
import io.kickplug.guest.virtio.VirtioBlkDriver;
import io.kickplug.virtio.transport.PciTransport;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.pci.PciRegisters;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The virtio-pci driver against the real {@link PciTransport} and a RAM disk with 3 queues: capability walk,
 * MSI-X vectors per queue and the fallbacks of Linux's vp_find_vqs (VIRTIO 1.2 sections 4.1.4, 4.1.5).
 */
class PciTransportDriverTest {
    private static final int QUEUES = 3;

    private final RamDiskDevice device = new RamDiskDevice(64 << 10, QUEUES, 16, RamDiskDevice.fullFeatures());
    private final PciTransport transport = new PciTransport(device, OffHeapGuestMemory.allocate(1 << 20), new VirtqueueFactoryComponent());
    private final TamperedPciPort port = new TamperedPciPort(transport);
    private DriverHarness guest;
    private VirtioBlkDriver driver;

    @AfterEach
    void tearDown() {
        if (guest != null) {
            guest.close();
        }
        transport.close();
        device.close();
    }

    private VirtioBlkDriver boot() {
        guest = DriverHarness.boot(port, new VirtqueueFactoryComponent(),
                DriverHarness.config(QUEUES, 4, Duration.ofSeconds(10)));
        driver = guest.driver();
        return driver;
    }

    /** One 512-byte write on {@code queue}, waited for; returns the vectors raised meanwhile. */
    private List<Integer> writeOn(int queue) throws InterruptedException {
        port.vectors.clear();
        DriverHarness.Request w = guest.trySubmit(queue, VirtioBlk.T_OUT, queue, new byte[512], 512);
        assertNotNull(w);
        // Wait (bounded) for the device's interrupt before collecting, so that the driver always takes the
        // interrupt path (vector or ISR) instead of sometimes finding the used entry first.
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (port.vectors.isEmpty()) {
            assertTrue(System.nanoTime() < deadline, "no interrupt within 10 s");
            Thread.onSpinWait();
        }
        List<DriverHarness.Request> done = new ArrayList<>();
        while (done.isEmpty()) {
            guest.awaitCompletions(done::add);
        }
        assertEquals(VirtioBlk.S_OK, w.slot().result(), "write on queue " + queue);
        return List.copyOf(port.vectors);
    }

    @Test
    void probeWalksTheCapabilityListAndEnablesTheFunction() throws InterruptedException {
        PciTransportDriver pci = new PciTransportDriver(port);
        // Section 4.1.2: device ID 0x1040 + 2.
        assertEquals(DeviceIds.BLOCK, pci.probe());
        assertEquals(QUEUES, pci.numQueues());
        // The device's MSI-X table has a vector per queue plus the configuration vector.
        assertEquals(QUEUES + 1, pci.msixTableSize());
        long command = port.configSpace().read(PciRegisters.COMMAND, 2);
        assertEquals(PciRegisters.COMMAND_MEMORY | PciRegisters.COMMAND_BUS_MASTER,
                command & (PciRegisters.COMMAND_MEMORY | PciRegisters.COMMAND_BUS_MASTER));
        assertEquals((64 << 10) / 512, pci.readConfig(VirtioBlk.CFG_CAPACITY, 4), "capacity from the device structure");
    }

    @Test
    void eachQueueInterruptsOnItsOwnMsixVector() throws InterruptedException {
        boot();
        // Section 4.1.5.1.2 and Linux's vp_find_vqs_msix: config on vector 0, queue q on vector q + 1.
        InterruptRouting r = driver.routing();
        assertEquals(InterruptRouting.Mode.MSIX_PER_QUEUE, r.mode());
        assertEquals(0, r.configVector());
        assertTrue(port.msixEnabled());
        assertEquals(List.of(2), writeOn(1), "section 4.1.5.3: queue 1's interrupt on vector 2");
        assertEquals(List.of(1), writeOn(0), "queue 0 on vector 1");
        assertEquals(List.of(3), writeOn(2), "queue 2 on vector 3");
        // With MSI-X the vector is the cause: the ISR is never read (section 4.1.4.5.1).
        assertEquals(0, port.isrReads.get());
        assertEquals("MSI-X, a vector per queue (config 0, queues 1-3)", r.describe());
    }

    @Test
    void configurationChangeArrivesOnTheConfigVector() throws InterruptedException {
        boot();
        device.faultSector = 7;
        port.vectors.clear();
        assertNotNull(guest.trySubmit(1, VirtioBlk.T_OUT, 7, new byte[512], 512));
        // Section 2.1.2: DEVICE_NEEDS_RESET comes with a configuration-change notification.
        GuestDriverException e = assertThrows(GuestDriverException.class, () -> guest.awaitCompletions(r -> { }));
        assertTrue(e.getMessage().contains("DEVICE_NEEDS_RESET"), e.getMessage());
        assertEquals(List.of(0), port.vectors, "section 4.1.5.4: config_msix_vector");
    }

    @Test
    void aTableTooSmallForAVectorPerQueueFallsBackToOneSharedVector() throws InterruptedException {
        port.msixTableSize = 2;
        boot();
        InterruptRouting r = driver.routing();
        assertEquals(InterruptRouting.Mode.MSIX_SHARED, r.mode());
        assertEquals("MSI-X, one vector shared by the queues (config 0, queues 1)", r.describe());
        for (int q = 0; q < QUEUES; q++) {
            assertEquals(List.of(1), writeOn(q), "queue " + q + " on the shared vector");
        }
        assertEquals(0, port.isrReads.get());
    }

    @Test
    void aRefusedQueueVectorFallsBackToOneSharedVector() throws InterruptedException {
        // Section 4.1.5.1.2: a device that cannot map a vector reads back NO_VECTOR.
        port.refuseQueueVectorsFrom = 2;
        boot();
        assertEquals(InterruptRouting.Mode.MSIX_SHARED, driver.routing().mode());
        assertEquals(List.of(1), writeOn(2));
        assertEquals(List.of(1), writeOn(0));
    }

    @Test
    void everyVectorRefusedFallsBackToIntxAndTheIsr() throws InterruptedException {
        port.refuseQueueVectorsFrom = 0;
        boot();
        assertEquals(InterruptRouting.Mode.LINE, driver.routing().mode());
        assertFalse(port.msixEnabled(), "MSI-X is disabled again after the refusals");
        assertEquals(0, port.configSpace().read(PciRegisters.COMMAND, 2) & PciRegisters.COMMAND_INTX_DISABLE,
                "INTx is not disabled");
        assertEquals(List.of(0), writeOn(1), "INTx is vector 0");
        // vp_interrupt: the ISR is read (which clears it, section 4.1.4.5).
        assertTrue(port.isrReads.get() > 0);
        assertEquals(List.of(0), writeOn(2));
    }

    @Test
    void aRefusedConfigVectorFallsBackToIntx() throws InterruptedException {
        port.refuseConfigVector = true;
        boot();
        assertEquals(InterruptRouting.Mode.LINE, driver.routing().mode());
        assertEquals(List.of(0), writeOn(0));
    }

    @Test
    void theIsrIsClearedByItsRead() throws InterruptedException {
        port.refuseQueueVectorsFrom = 0;
        boot();
        // An interrupt the driver did not consume yet: the ISR holds the queue bit once, then reads 0.
        PciTransportDriver pci = new PciTransportDriver(port);
        pci.probe();
        port.vectors.clear();
        assertNotNull(guest.trySubmit(0, VirtioBlk.T_OUT, 1, new byte[512], 512));
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (port.vectors.isEmpty() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(List.of(0), port.vectors);
        assertEquals(InterruptRouting.USED_BUFFER, pci.interruptStatus());
        assertEquals(0, pci.interruptStatus(), "section 4.1.4.5: the read cleared it");
    }

    @Test
    void aNotifyOffsetPastTheNotifyStructureIsRefused() throws InterruptedException {
        port.notifyOff = 0x4000;
        GuestDriverException e = assertThrows(GuestDriverException.class, this::boot);
        assertTrue(e.getMessage().startsWith("bad notification offset 16384 (x 4) for queue 0"), e.getMessage());
        assertTrue(e.getMessage().contains("4.1.4.4"), e.getMessage());
        assertNotEquals(0, transport.deviceStatus() & DeviceStatus.FAILED);
    }

    @Test
    void anotherVendorIsNotProbed() throws InterruptedException {
        port.vendor = 0x8086;
        GuestDriverException e = assertThrows(GuestDriverException.class, this::boot);
        assertEquals("no virtio-pci device: vendor ID is 0x8086, expected 0x1af4 (VIRTIO 1.2 section 4.1.2)",
                e.getMessage());
    }

    @Test
    void notifyBeforeTheQueueIsSetUpIsAProgrammingError() throws InterruptedException {
        PciTransportDriver pci = new PciTransportDriver(port);
        assertThrows(IllegalStateException.class, pci::numQueues, "used before probe");
        pci.probe();
        assertEquals("queue 0 has no notify address: it was not set up",
                assertThrows(IllegalStateException.class, () -> pci.notify(0)).getMessage());
    }
}
