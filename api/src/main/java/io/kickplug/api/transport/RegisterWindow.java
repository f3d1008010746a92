package io.kickplug.api.transport;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A window of device registers as a guest accesses them: an MMIO region, a PCI BAR or a PCI
 * configuration space. Each access is one guest load or store of 1, 2, 4 or 8 bytes, little-endian. An
 * access the device does not decode reads as 0 and is otherwise ignored, as on real hardware.
 */
@ProviderType
public interface RegisterWindow {

    /** Size of the window in bytes. */
    long size();

    long read(long offset, int width);

    void write(long offset, int width, long value);
}
