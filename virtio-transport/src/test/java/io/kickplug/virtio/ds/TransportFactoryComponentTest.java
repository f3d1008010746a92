package io.kickplug.virtio.ds;

import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.transport.TransportInstance;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.virtio.transport.MmioTransport;
import io.kickplug.virtio.transport.PciTransport;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.testkit.EchoDevice;
import org.junit.jupiter.api.Test;

class TransportFactoryComponentTest {
    @Test
    void buildsMmioAndPciAndRefusesVhostUser() {
        OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(1 << 16);
        EchoDevice device = new EchoDevice(1, 0);
        TransportFactoryComponent factory = new TransportFactoryComponent(new VirtqueueFactoryComponent());
        try (TransportInstance pci = factory.create(TransportKind.PCI, device, mem);
                TransportInstance mmio = factory.create(TransportKind.MMIO, device, mem)) {
            assertInstanceOf(PciTransport.class, pci);
            assertEquals(TransportKind.PCI, pci.port().kind());
            assertNotNull(pci.port().pci());
            assertInstanceOf(MmioTransport.class, mmio);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> factory.create(TransportKind.VHOST_USER, device, mem));
            assertTrue(e.getMessage().contains("pci"), e.getMessage());
        } finally {
            device.close();
        }
    }
}
