package io.kickplug.virtio.ds;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.TransportFactory;
import io.kickplug.api.transport.TransportInstance;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.virtio.device.MmioTransport;
import io.kickplug.virtio.device.PciTransport;
import org.osgi.service.component.annotations.Component;

/** In-process transports. */
@Component(service = TransportFactory.class)
public final class TransportFactoryComponent implements TransportFactory {

    @Override
    public TransportInstance create(TransportKind kind, VirtioDevice device, GuestMemory memory) {
        return switch (kind) {
            case MMIO -> new MmioTransport(device, memory);
            case PCI -> new PciTransport(device, memory);
            default -> throw new IllegalArgumentException("transport " + kind.label()
                    + " is not available in-process (available: mmio, pci)");
        };
    }
}
