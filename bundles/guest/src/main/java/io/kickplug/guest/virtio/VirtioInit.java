package io.kickplug.guest.virtio;

import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.transport.VirtioTransportDriver;
import java.time.Duration;

/**
 * The device-independent steps of driver initialization, in the order of VIRTIO 1.2 section 3.1.1. The
 * device-specific part (config reads, queue discovery) happens between {@link #negotiate} and
 * {@link #driverOk}, done by the device driver with {@link #setupQueue}-style transport calls.
 *
 * <p>Each step sets its bit on top of the status read back from the device, as Linux's
 * {@code virtio_add_status} does, so a bit the device dropped (FEATURES_OK) is not written again.
 */
public final class VirtioInit {

    private final VirtioTransportDriver transport;
    private final Duration resetTimeout;

    public VirtioInit(VirtioTransportDriver transport, Duration resetTimeout) {
        this.transport = transport;
        this.resetTimeout = resetTimeout;
    }

    /**
     * Steps 1 to 6: reset, ACKNOWLEDGE, DRIVER, feature negotiation and FEATURES_OK.
     *
     * @param expectedDeviceId the device ID this driver drives (section 5)
     * @param supported the features the driver understands
     * @return the negotiated features (offered and supported)
     * @throws GuestDriverException when the device is the wrong kind, is legacy-only or refuses the
     *     features; FAILED is set in the last two cases
     */
    public long negotiate(int expectedDeviceId, long supported) {
        int deviceId = transport.probe();
        if (deviceId != expectedDeviceId) {
            throw new GuestDriverException("device ID " + deviceId + " is not the expected " + expectedDeviceId
                    + (deviceId == 0 ? " (0 is a placeholder without a device, VIRTIO 1.2 section 4.2.3.1.1)"
                            : " (VIRTIO 1.2 section 5)"));
        }
        reset();
        addStatus(DeviceStatus.ACKNOWLEDGE);
        addStatus(DeviceStatus.DRIVER);
        long offered = transport.deviceFeatures();
        if ((offered & VirtioFeatures.VERSION_1) == 0) {
            // Section 6 / 2.2: this driver has no legacy interface, so it needs VIRTIO_F_VERSION_1.
            fail();
            throw new GuestDriverException(String.format("device offers features 0x%x without VIRTIO_F_VERSION_1;"
                    + " legacy devices are not supported (VIRTIO 1.2 sections 2.2 and 6)", offered));
        }
        long accepted = offered & supported;
        transport.setDriverFeatures(accepted);
        addStatus(DeviceStatus.FEATURES_OK);
        int readBack = transport.status();
        if ((readBack & DeviceStatus.FEATURES_OK) == 0) {
            // Section 3.1.1 step 6 and 2.2.2: a device that does not keep FEATURES_OK refuses the subset.
            fail();
            throw new GuestDriverException(String.format("device did not keep FEATURES_OK after the driver wrote "
                    + "features 0x%x (status reads 0x%x); device unusable (VIRTIO 1.2 sections 3.1.1 and 2.2.2)",
                    accepted, readBack));
        }
        return accepted;
    }

    /** Step 8: DRIVER_OK; the device is live from now on. */
    public void driverOk() {
        addStatus(DeviceStatus.DRIVER_OK);
    }

    /** Sets FAILED on top of the current status (section 3.1.1: the driver gives up on the device). */
    public void fail() {
        addStatus(DeviceStatus.FAILED);
    }

    /**
     * Writes 0 to the status register and reads it back until the device reports 0 (sections 2.4 and
     * 4.2.2.1); bounded by the reset timeout.
     */
    public void reset() {
        transport.setStatus(0);
        long deadline = System.nanoTime() + resetTimeout.toNanos();
        int spins = 0;
        while (transport.status() != 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new GuestDriverException("device did not complete its reset (status still 0x"
                        + Integer.toHexString(transport.status()) + ") within " + resetTimeout.toMillis()
                        + " ms (VIRTIO 1.2 section 2.4)");
            }
            if (++spins % 64 == 0) {
                Thread.yield();
            } else {
                Thread.onSpinWait();
            }
        }
    }

    private void addStatus(int bit) {
        // DEVICE_NEEDS_RESET is the device's bit (section 2.1); the driver never writes it.
        int current = transport.status() & ~DeviceStatus.DEVICE_NEEDS_RESET;
        transport.setStatus(current | bit);
    }
}
