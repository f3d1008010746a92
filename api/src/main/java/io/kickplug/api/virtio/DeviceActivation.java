package io.kickplug.api.virtio;

import io.kickplug.api.memory.GuestMemory;
import java.util.List;

/**
 * What a transport hands a device at DRIVER_OK.
 *
 * @param negotiatedFeatures features the driver accepted and the device agreed to (FEATURES_OK was kept)
 * @param memory the guest memory the queues live in
 * @param queues the device views of all queues, indexed by queue number; an entry is {@code null} for a queue
 *     the driver did not enable
 * @param signals where the device reports used buffers, configuration changes and faults
 * @param kicks the queues' notification descriptors for a device that waits on them itself, or {@code null}:
 *     notifications then arrive as {@link VirtioDevice#queueNotify(int)}
 */
public record DeviceActivation(long negotiatedFeatures, GuestMemory memory, List<DeviceQueue> queues,
        DeviceSignals signals, KickDescriptors kicks) {

    /** An activation whose notifications arrive as {@link VirtioDevice#queueNotify(int)}. */
    public DeviceActivation(long negotiatedFeatures, GuestMemory memory, List<DeviceQueue> queues,
            DeviceSignals signals) {
        this(negotiatedFeatures, memory, queues, signals, null);
    }
}
