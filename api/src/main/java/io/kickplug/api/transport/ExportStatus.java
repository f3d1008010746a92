package io.kickplug.api.transport;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Service of a bundle that exports disks to another process (the vhost-user back-end): what each export
 * listens on and whether its front-end is connected, for {@code kp:disks}.
 */
@ProviderType
public interface ExportStatus {

    /**
     * One export.
     *
     * @param disk the disk name
     * @param kind the protocol, for example {@code vhost-user}
     * @param address where it listens, for example the socket path
     * @param state {@code connected}, {@code listening} or {@code closed}
     */
    record Export(String disk, String kind, String address, String state) {
    }

    /** The exports now, in the order they were made. */
    List<Export> exports();

    /**
     * Live migration's dirty logging of one export (vhost-user: VHOST_F_LOG_ALL with a log from SET_LOG_BASE).
     *
     * @param disk the disk name
     * @param kind the protocol, for example {@code vhost-user}
     * @param logging whether the export's device marks every page it writes now (a migration is under way)
     * @param pagesMarked pages it marked since the export began (bits it set that were clear)
     * @since 1.4
     */
    record DirtyLog(String disk, String kind, boolean logging, long pagesMarked) {
    }

    /**
     * Dirty logging per export, for {@code kp:stats}; empty for an exporter that cannot live-migrate (the default).
     *
     * @since 1.4
     */
    default List<DirtyLog> dirtyLogs() {
        return List.of();
    }
}
