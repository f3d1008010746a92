package io.kickplug.api.guest;

import org.osgi.annotation.versioning.ProviderType;

/** Service of the simulated guest: it boots a driver on an attached disk and runs workloads. */
@ProviderType
public interface GuestWorkloads {

    /**
     * Initialises the device through its transport (section 3.1), writes a pattern, reads it back and
     * compares, then resets the device.
     *
     * @throws io.kickplug.api.blk.DiskException when the disk does not exist
     * @throws IllegalArgumentException for bad options
     */
    IoPassResult writeReadVerify(String disk, IoPassOptions options);
}
