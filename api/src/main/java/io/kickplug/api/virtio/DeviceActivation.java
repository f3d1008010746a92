package io.kickplug.api.virtio;

import io.kickplug.api.memory.GuestMemory;
import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/** What a transport hands a device at DRIVER_OK. */
@ProviderType
public interface DeviceActivation {

    /** Features the driver accepted and the device agreed to (FEATURES_OK was kept). */
    long negotiatedFeatures();

    GuestMemory memory();

    /**
     * The device views of all queues, indexed by queue number; an entry is {@code null} for a queue the
     * driver did not enable.
     */
    List<DeviceQueue> queues();

    DeviceSignals signals();
}
