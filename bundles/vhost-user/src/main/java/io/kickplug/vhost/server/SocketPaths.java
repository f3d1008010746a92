package io.kickplug.vhost.server;

import java.io.IOException;
import java.net.SocketException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.stream.Stream;
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
     * Binds a listening socket at {@code path} with mode 0600. The socket is created inside a fresh 0700
     * directory next to {@code path}, made 0600 and then moved into place, so it is never reachable with a
     * wider mode (whatever the umask).
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
        Path dir;
        try {
            dir = Files.createTempDirectory(parent, ".kp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (AccessDeniedException e) {
            throw new IOException("cannot create the socket in " + parent + ": permission denied");
        }
        Path temp = dir.resolve("s");
        AFUNIXServerSocket server = AFUNIXServerSocket.newInstance();
        try {
            if (temp.toString().getBytes().length > MAX_PATH_BYTES) {
                throw new IOException("socket path " + target + " is too long for a temporary name beside it");
            }
            server.bind(AFUNIXSocketAddress.of(temp.toFile()));
            Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rw-------"));
            try {
                Files.move(temp, target);
            } catch (FileAlreadyExistsException e) {
                throw new IOException("socket path " + target + " appeared while binding; not replacing it");
            }
            return server;
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        } finally {
            deleteTree(dir);
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // a temporary leftover is harmless
                }
            });
        } catch (NoSuchFileException e) {
            // already gone
        } catch (IOException e) {
            // a temporary leftover is harmless
        }
    }
}
