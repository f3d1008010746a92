package io.kickplug.vhost.server;

import java.io.IOException;
import java.net.SocketException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.newsclub.net.unix.AFUNIXServerSocket;
import org.newsclub.net.unix.AFUNIXSocket;
import org.newsclub.net.unix.AFUNIXSocketAddress;

/** Creating the listening socket file: mode 0600, never over a live socket or a non-socket file. */
final class SocketPaths {

    /** S_IFMT and S_IFSOCK of st_mode. */
    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;
    /** sun_path holds 108 bytes including the terminating NUL. */
    private static final int MAX_PATH_BYTES = 107;

    private SocketPaths() {
    }

    /**
     * Refuses a path that exists and is not a stale socket; removes a stale one (a socket nobody listens on).
     *
     * @throws IOException with a one-line reason
     */
    static void clearStale(Path path) throws IOException {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        if ((mode & S_IFMT) != S_IFSOCK) {
            throw new IOException("socket path " + path + " exists and is not a socket; not touching it");
        }
        try (AFUNIXSocket probe = AFUNIXSocket.newInstance()) {
            probe.connect(AFUNIXSocketAddress.of(path.toFile()));
            throw new IOException("socket path " + path + " is in use: another process listens on it");
        } catch (SocketException refused) {
            // ECONNREFUSED: nobody listens; the file is left over from an earlier run.
            Files.deleteIfExists(path);
        }
    }

    /**
     * Binds a listening socket at {@code path} and sets its mode to 0600 before anything is accepted. The
     * socket file is created with the process umask first (Java cannot change the umask); connecting needs
     * write permission, so under the usual umask 022 or 077 no other user can connect in that instant.
     * (Binding elsewhere and renaming the file into place does not work: junixsocket's accept checks that the
     * bound path still names the socket.)
     */
    static AFUNIXServerSocket bind(Path path) throws IOException {
        Path target = path.toAbsolutePath();
        Path parent = target.getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw new IOException("socket directory " + parent + " does not exist");
        }
        if (target.toString().getBytes().length > MAX_PATH_BYTES) {
            throw new IOException("socket path " + target + " is longer than " + MAX_PATH_BYTES + " bytes");
        }
        AFUNIXServerSocket server = AFUNIXServerSocket.newInstance();
        try {
            server.bind(AFUNIXSocketAddress.of(target.toFile()));
            Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-------"));
            return server;
        } catch (AccessDeniedException e) {
            server.close();
            throw new IOException("cannot create the socket " + target + ": permission denied");
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
    }
}
