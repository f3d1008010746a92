package io.kickplug.guest;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.blk.testkit.StubDiskManager;
import io.kickplug.guest.testing.RamDiskDevice;
import io.kickplug.virtio.transport.MmioTransport;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class GuestWorkloadsComponentTest {

    private final RamDiskDevice device = new RamDiskDevice(256 << 10, 1, 128, RamDiskDevice.fullFeatures());
    private final MmioTransport transport = new MmioTransport(device, OffHeapGuestMemory.allocate(4 << 20), new VirtqueueFactoryComponent());
    private int portLookups;

    private final DiskManager disks = new StubDiskManager() {
        @Override
        public GuestPort port(String name) {
            portLookups++;
            if (!name.equals("d1")) {
                throw new DiskException("no disk named '" + name + "'");
            }
            return transport;
        }
    };

    private final GuestWorkloadsComponent workloads = new GuestWorkloadsComponent(disks, new VirtqueueFactoryComponent());

    @AfterEach
    void tearDown() {
        transport.close();
        device.close();
    }

    @Test
    void runsAPassOnTheNamedDiskWithDefaultOptions() {
        IoPassResult r = workloads.writeReadVerify("d1", null);
        assertEquals("d1", r.disk());
        assertEquals(2 * (256 << 10) / 4096, r.requests());
        assertEquals(0, r.mismatches());
    }

    @Test
    void unknownDiskIsTheDiskManagersError() {
        assertEquals("no disk named 'nosuch'", assertThrows(DiskException.class,
                () -> workloads.writeReadVerify("nosuch", IoPassOptions.defaults())).getMessage());
    }

    @Test
    void optionsAreCheckedBeforeTheDiskIsTouched() {
        assertThrows(IllegalArgumentException.class, () -> workloads.writeReadVerify("d1", new IoPassOptions(0, 1, 0)));
        assertEquals(0, portLookups);
    }

    @Test
    void consecutivePassesUseDifferentPatterns() {
        workloads.writeReadVerify("d1", new IoPassOptions(4096, 1, 4096));
        byte[] first = java.util.Arrays.copyOf(device.disk, 4096);
        workloads.writeReadVerify("d1", new IoPassOptions(4096, 1, 4096));
        assertFalse(java.util.Arrays.equals(first, java.util.Arrays.copyOf(device.disk, 4096)));
    }
}
