package io.kickplug.api.control;

import java.io.IOException;
import org.osgi.annotation.versioning.ProviderType;

/** The NBD server of the NBD export bundle (QEMU's {@code nbd-server-start} and {@code nbd-server-stop}). */
@ProviderType
public interface NbdServerControl {

    /**
     * Starts the server on a Unix socket ({@code unixPath} not null) or a TCP address; it is saved and comes back
     * after a bundle update.
     *
     * @param maxConnections at most this many clients at once, 0 for no limit
     * @return where it listens, as the NBD export bundle prints it
     * @throws IllegalStateException when a server runs already
     * @throws IOException when the socket cannot be opened
     */
    String start(String unixPath, String host, int port, int maxConnections) throws IOException;

    /**
     * Stops the server and ends every NBD export.
     *
     * @throws IllegalStateException when no server runs
     */
    void stop();

    /** Where the server listens, or null when none runs. */
    String address();
}
