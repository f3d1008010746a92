package io.kickplug.virtio.ds;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.TransportFactory;
import io.kickplug.api.transport.TransportInstance;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.virtio.transport.MmioTransport;
import io.kickplug.virtio.transport.PciTransport;
import java.util.Objects;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * In-process transports. The rings come from the bound {@link VirtqueueFactory} (the virtqueue bundle): when
 * that bundle goes away this component goes too, and so do the disks built on it, until it returns.
 */
@Component(service = TransportFactory.class)
public final class TransportFactoryComponent implements TransportFactory {

    private final VirtqueueFactory rings;

    @Activate
    public TransportFactoryComponent(@Reference(name = "virtqueueFactory") VirtqueueFactory rings) {
        this.rings = Objects.requireNonNull(rings, "rings");
    }

    @Override
    public TransportInstance create(TransportKind kind, VirtioDevice device, GuestMemory memory) {
        return switch (kind) {
            case MMIO -> new MmioTransport(device, memory, rings);
            case PCI -> new PciTransport(device, memory, rings);
            default -> throw new IllegalArgumentException("transport " + kind.label()
                    + " is not available in-process (available: mmio, pci)");
        };
    }
}
