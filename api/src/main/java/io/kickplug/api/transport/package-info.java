/**
 * Transports: the register windows a guest sees (virtio-mmio, virtio-pci), interrupt delivery to the guest, and the factory that puts a device behind a transport.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.4.0")
package io.kickplug.api.transport;
