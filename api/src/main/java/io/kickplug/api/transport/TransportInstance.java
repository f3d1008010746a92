package io.kickplug.api.transport;

import org.osgi.annotation.versioning.ProviderType;

/** One device behind one transport, as the host manages it. */
@ProviderType
public interface TransportInstance extends AutoCloseable {

    TransportKind kind();

    /** What the guest may touch. */
    GuestPort port();

    /** The device status register as the driver last left it (section 2.1). */
    int deviceStatus();

    /** Resets the device as a status write of 0 would, then detaches the guest's interrupts. */
    @Override
    void close();
}
