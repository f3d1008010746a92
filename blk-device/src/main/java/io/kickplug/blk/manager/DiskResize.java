package io.kickplug.blk.manager;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.blk.device.VirtioBlkDevice;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;

/**
 * Resizes an attached disk ({@link DiskRegistry#resize}): checks the new size, changes the backend's size, then
 * the disk's device and its exported devices announce the new capacity with a configuration-change notification
 * (VIRTIO 1.2 section 5.2.6.2). Requests already validated against the old capacity that reach past a smaller one
 * fail with IOERR in the backend. Called under the registry's monitor.
 */
final class DiskResize {

    /** The registry's logger: these messages are the registry's. */
    private static final Logger LOG = System.getLogger(DiskRegistry.class.getName());

    private DiskResize() {
    }

    /**
     * Resizes {@code disk} to {@code newSizeBytes} (nothing when it has that size already).
     *
     * @param exported the devices exported from the disk (vhost-user), told of the new capacity too
     * @param storageChanged the storage has the new size already (another client resized it): a read-only disk
     *        takes it too, and the backend only takes note
     * @return the disk as it is attached again after the resize: {@code disk} itself, or with its spec's backend
     *         size changed when the spec names a size
     * @throws DiskException for a size that is not a positive multiple of 512 bytes, a read-only disk or a
     *         backend that cannot resize
     */
    static AttachedDisk resize(AttachedDisk disk, long newSizeBytes, List<VirtioBlkDevice> exported,
            boolean storageChanged) {
        String name = disk.spec().name();
        if (newSizeBytes <= 0 || newSizeBytes % VirtioBlk.SECTOR_SIZE != 0) {
            throw new DiskException("new size " + newSizeBytes + " of disk '" + name
                    + "' is not a positive multiple of 512 bytes");
        }
        if (disk.device().readOnly() && !storageChanged) {
            throw new DiskException("disk '" + name + "' is read-only and cannot be resized");
        }
        BlockBackend backend = disk.backend();
        long oldSize = backend.size();
        if (newSizeBytes == oldSize) {
            return disk;
        }
        try {
            backend.resize(newSizeBytes);
        } catch (UnsupportedOperationException e) {
            throw new DiskException("the " + backend.kind() + " backend of disk '" + name + "' cannot resize");
        } catch (IOException | RuntimeException e) {
            throw new DiskException("cannot resize disk '" + name + "' to " + newSizeBytes + " bytes: "
                    + e.getMessage(), e);
        }
        disk.device().capacityChanged();
        // Exported devices (vhost-user) read the same backend: their front-ends are told too.
        exported.forEach(VirtioBlkDevice::capacityChanged);
        // A re-attach (kp:ring) opens the backend at its new size; one sized by its storage stays so.
        AttachedDisk resized = disk;
        BackendSpec b = disk.spec().backend();
        if (b.sizeBytes() != 0) {
            resized = disk.withSpec(disk.spec().withBackend(new BackendSpec(b.kind(), b.path(), newSizeBytes,
                    b.readOnly(), b.direct(), b.readZeroes(), b.latencyNs())));
        }
        LOG.log(Level.INFO, "resized disk " + name + " from " + oldSize + " to " + newSizeBytes + " bytes"
                + (storageChanged ? " (its storage was resized by another client)" : ""));
        return resized;
    }
}
