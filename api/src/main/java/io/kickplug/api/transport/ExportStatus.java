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
}
