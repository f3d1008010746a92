package io.kickplug.launcher;

import java.io.IOException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Creating the control socket's file: only the owner may connect (mode 0600), an existing path is taken over
 * only when it is a stale socket (nobody accepts on it), anything else that exists there is refused.
 */
final class ControlSocket {

    /** {@code S_IFMT} and {@code S_IFSOCK} of stat(2). */
    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;
    /** sun_path holds 108 bytes including the terminating NUL. */
    static final int MAX_PATH_BYTES = 107;

    private ControlSocket() {
    }

    /**
     * A listening channel on {@code path}, mode 0600. The socket is bound inside a fresh directory of mode
     * 0700 next to {@code path} and then renamed into place, so no other user can connect between bind and
     * chmod; when that longer path does not fit sun_path it is bound in place and chmod-ed at once.
     */
    static ServerSocketChannel bind(Path path) throws IOException {
        Path target = path.toAbsolutePath();
        if (target.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
            throw new IOException("control socket path is longer than " + MAX_PATH_BYTES + " bytes: " + target);
        }
        clearStale(target);
        Path parent = target.getParent();
        Path privateDir = Files.createTempDirectory(parent, ".kpctl",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        try {
            Path staging = privateDir.resolve("s");
            boolean staged = staging.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length
                    <= MAX_PATH_BYTES;
            Path bindAt = staged ? staging : target;
            ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                server.bind(UnixDomainSocketAddress.of(bindAt));
                Files.setPosixFilePermissions(bindAt, PosixFilePermissions.fromString("rw-------"));
                if (staged) {
                    try {
                        // rename(2) replaces nothing here: clearStale removed what was there, and a file that
                        // appeared since is refused below (ATOMIC_MOVE alone would overwrite it).
                        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                            throw new FileAlreadyExistsException(target.toString(), null,
                                    "appeared while the control socket was being created");
                        }
                        Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
                    } catch (AtomicMoveNotSupportedException e) {
                        throw new IOException("cannot move the control socket into place: " + e.getMessage(), e);
                    }
                }
                return server;
            } catch (IOException | RuntimeException e) {
                server.close();
                throw e;
            }
        } finally {
            Files.deleteIfExists(privateDir.resolve("s"));
            Files.deleteIfExists(privateDir);
        }
    }

    /** Removes {@code path} when it is a socket nobody listens on; refuses anything else that exists. */
    static void clearStale(Path path) throws IOException {
        int mode;
        try {
            mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return;
        }
        if ((mode & S_IFMT) != S_IFSOCK) {
            throw new FileAlreadyExistsException(path.toString(), null, "exists and is not a socket; refusing to "
                    + "replace it");
        }
        try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(path))) {
            throw new FileAlreadyExistsException(path.toString(), null, "another process is listening on it");
        } catch (ConnectException stale) {
            // ECONNREFUSED: a socket file left behind by a process that is gone.
            Files.deleteIfExists(path);
        }
    }
}
