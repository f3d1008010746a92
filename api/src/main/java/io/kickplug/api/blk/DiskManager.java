package io.kickplug.api.blk;

import io.kickplug.api.transport.GuestPort;
import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/** Service that attaches, lists and detaches disks. */
@ProviderType
public interface DiskManager {

    /**
     * Opens the backend, creates the device, its I/O threads and its transport.
     *
     * @throws DiskException on bad input or a backend that cannot be opened; nothing stays attached then
     */
    DiskInfo attach(DiskSpec spec);

    /**
     * Resets the device (waiting for in-flight requests to complete with their true status), stops its
     * I/O threads and closes the backend.
     *
     * @throws DiskException when no disk has that name
     */
    void detach(String name);

    List<DiskInfo> list();

    /** @throws DiskException when no disk has that name */
    DiskInfo info(String name);

    /**
     * What a simulated guest may touch of the disk's device.
     *
     * @throws DiskException when no disk has that name or it has no in-process transport
     */
    GuestPort port(String name);
}
