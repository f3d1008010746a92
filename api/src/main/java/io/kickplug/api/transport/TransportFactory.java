package io.kickplug.api.transport;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.VirtioDevice;
import org.osgi.annotation.versioning.ProviderType;

/** Service that puts a device behind an in-process transport (MMIO or PCI). */
@ProviderType
public interface TransportFactory {

    /**
     * @throws IllegalArgumentException for a kind this factory does not build
     */
    TransportInstance create(TransportKind kind, VirtioDevice device, GuestMemory memory);
}
