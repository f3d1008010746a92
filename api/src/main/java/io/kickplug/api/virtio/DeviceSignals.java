package io.kickplug.api.virtio;

import org.osgi.annotation.versioning.ProviderType;

/** The device's way back to the driver: notifications and the fault latch. Thread-safe. */
@ProviderType
public interface DeviceSignals {

    /**
     * Sends a used-buffer notification for queue {@code queueIndex} (an interrupt). The caller has already
     * decided, with {@link DeviceQueue#needsNotification()}, that one is due.
     */
    void usedBuffer(int queueIndex);

    /** Sends a configuration-change notification (section 2.5) and advances the config generation. */
    void configChanged();

    /**
     * Latches a device error caused by the driver: sets DEVICE_NEEDS_RESET and, when DRIVER_OK is set,
     * sends a configuration-change notification (section 2.1.2). Idempotent.
     */
    void deviceError(GuestFaultException fault);

    /** True once {@link #deviceError} was called and no reset followed. */
    boolean needsReset();
}
