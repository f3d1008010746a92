package io.kickplug.api.control;

import java.util.List;
import java.util.Map;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The block exports of one kind (the service property {@value #TYPE}: {@code vhost-user-blk} or {@code nbd}), as
 * the bundle serving them keeps them: an export made here is saved in that bundle's export configuration and
 * comes back after a bundle update, as one made by its Gogo command.
 */
@ProviderType
public interface BlockExports {

    /** The service property naming the kind of export: QEMU's {@code BlockExportType} ({@code vhost-user-blk}, {@code nbd}). */
    String TYPE = "kickplug.export.type";

    /**
     * Exports disk {@code disk}.
     *
     * @param writable whether clients may write (a read-only disk cannot be exported writable)
     * @param options the kind's options: {@code socket} and {@code queues} for vhost-user-blk, {@code name} for nbd
     * @return the export made
     * @throws io.kickplug.api.blk.DiskException for an unknown disk, a name or socket taken, an option this kind
     *     cannot honour (one line saying why)
     * @throws IllegalArgumentException for an unknown option or a malformed value
     * @throws IllegalStateException when the kind cannot export now (no NBD server runs)
     */
    Export add(String disk, boolean writable, Map<String, String> options);

    /**
     * Ends export {@code key} and deletes its configuration: its clients are disconnected.
     *
     * @throws io.kickplug.api.blk.DiskException when no export has that key
     */
    void delete(String key);

    /** The exports of this kind now. */
    List<Export> list();

    /**
     * One export.
     *
     * @param key what {@link #delete} takes: the disk for vhost-user-blk, the export name for nbd
     * @param disk the exported disk
     * @param address where clients connect (the socket path, the NBD URI)
     * @param state {@code listening} or {@code connected}
     */
    record Export(String key, String disk, boolean writable, String address, String state) {
    }
}
