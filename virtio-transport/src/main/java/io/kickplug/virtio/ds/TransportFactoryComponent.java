package io.kickplug.virtio.ds;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.TransportFactory;
import io.kickplug.api.transport.TransportInstance;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.virtio.transport.MmioTransport;
import io.kickplug.virtio.transport.PciTransport;
import java.util.Objects;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * In-process transports. The rings come from the bound {@link VirtqueueFactory} services (the virtqueue bundles):
 * the split one, required, and the packed one when its bundle is there ({@link RingSelector}; without it the
 * transports do not offer VIRTIO_F_RING_PACKED). Both references are static: when either bundle goes away or
 * comes this component is re-created, and so are the disks built on it (the hot-swap path).
 */
@Component(service = TransportFactory.class)
public final class TransportFactoryComponent implements TransportFactory {

    private final VirtqueueFactory rings;

    @Activate
    public TransportFactoryComponent(
            @Reference(name = "virtqueueFactory", target = "(!(" + VirtqueueFactory.RING_PROPERTY + "=packed))")
            VirtqueueFactory rings,
            @Reference(name = "packedVirtqueueFactory", target = "(" + VirtqueueFactory.RING_PROPERTY + "=packed)",
                    cardinality = ReferenceCardinality.OPTIONAL, policyOption = ReferencePolicyOption.GREEDY)
            VirtqueueFactory packed) {
        this.rings = RingSelector.of(Objects.requireNonNull(rings, "rings"), packed);
    }

    /** Split rings only, or a {@link RingSelector} made by the caller (tests). */
    public TransportFactoryComponent(VirtqueueFactory rings) {
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
