package io.kickplug.export.nbd;

import java.io.FileDescriptor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.newsclub.net.unix.AFUNIXServerSocketChannel;
import org.newsclub.net.unix.FileDescriptorCast;

/**
 * Where a server listens: a Unix socket path, a TCP host and port, or a listening socket the process inherited, by
 * descriptor number (QEMU's {@code --nbd-server addr.type=fd}). Unix and TCP sockets are the JDK's own (Java 16+
 * speaks AF_UNIX); an inherited descriptor is wrapped by junixsocket ({@link FileDescriptorCast}), which the JDK
 * cannot do, and only an AF_UNIX one: junixsocket wraps Unix sockets, not an inherited TCP socket.
 */
public record Listener(String socket, String host, int port, int fd) {

    /** A Unix socket at {@code path}. */
    public static Listener unix(String path) {
        return new Listener(path, null, -1, -1);
    }

    /** TCP on {@code host}:{@code port}. */
    public static Listener tcp(String host, int port) {
        return new Listener(null, host, port, -1);
    }

    /** An inherited listening Unix socket. */
    public static Listener inherited(int fd) {
        return new Listener(null, null, -1, fd);
    }

    public Listener {
        int kinds = (socket != null ? 1 : 0) + (host != null ? 1 : 0) + (fd >= 0 ? 1 : 0);
        if (kinds != 1) {
            throw new IllegalArgumentException("exactly one of a socket path, a host or a descriptor is needed");
        }
        if (host != null && (port < 0 || port > 65535)) {
            throw new IllegalArgumentException("port " + port + " is not in 0..65535");
        }
    }

    /** How a client reaches an export {@code name} here (libnbd/QEMU NBD URI). */
    public String uri(String name, int boundPort) {
        if (socket != null) {
            return "nbd+unix:///" + name + "?socket=" + socket;
        }
        if (host != null) {
            String h = host.contains(":") ? "[" + host + "]" : host;
            return "nbd://" + h + ":" + boundPort + "/" + name;
        }
        return "fd " + fd + " (export " + name + ")";
    }

    /** What {@code kp:nbd-server} shows. */
    public String describe(int boundPort) {
        if (socket != null) {
            return "unix:" + socket;
        }
        if (host != null) {
            return "tcp:" + host + ":" + boundPort;
        }
        return "fd:" + fd;
    }

    /**
     * Opens the listening channel (blocking). A Unix socket path that exists as a socket is replaced (a stale one of
     * an earlier run); any other file there is left alone and the open fails. The socket is made 0600.
     */
    ServerSocketChannel open() throws IOException {
        if (socket != null) {
            Path path = Path.of(socket);
            if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                if (Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS) || Files.isDirectory(path,
                        LinkOption.NOFOLLOW_LINKS) || Files.isSymbolicLink(path)) {
                    throw new IOException(socket + " exists and is not a socket");
                }
                Files.delete(path);
            }
            ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                ch.bind(UnixDomainSocketAddress.of(path));
                Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-------"));
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
            return ch;
        }
        if (host != null) {
            ServerSocketChannel ch = ServerSocketChannel.open();
            try {
                ch.bind(new InetSocketAddress(host, port));
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
            return ch;
        }
        return inheritedChannel(fd);
    }

    /**
     * A duplicate of inherited descriptor {@code fd}, wrapped. Closing it (the server stops, its bundle is updated)
     * leaves {@code fd} open but junixsocket shuts the socket down, so a server cannot listen on it again: an inherited
     * socket serves one server's life. Only AF_UNIX sockets: junixsocket cannot wrap an inherited TCP socket, and the
     * JDK wraps none.
     */
    private static ServerSocketChannel inheritedChannel(int fd) throws IOException {
        FileDescriptor inherited = FileDescriptorCast.unsafeUsing(fd).getFileDescriptor();
        FileDescriptorCast dup = FileDescriptorCast.duplicating(inherited);
        if (!dup.isAvailable(AFUNIXServerSocketChannel.class)) {
            closeQuietly(dup);
            throw new IOException("descriptor " + fd + " is not a listening Unix socket (types: "
                    + dup.availableTypes() + "); an inherited TCP socket cannot be wrapped");
        }
        AFUNIXServerSocketChannel ch = dup.as(AFUNIXServerSocketChannel.class);
        ch.setDeleteOnClose(false); // the socket file belongs to whoever made the inherited socket
        return ch;
    }

    private static void closeQuietly(FileDescriptorCast c) {
        try {
            new java.io.FileInputStream(c.getFileDescriptor()).close();
        } catch (IOException | RuntimeException e) {
            // nothing more to do
        }
    }

    /** Removes the socket file of a Unix listener (after the channel closed). */
    void cleanUp() {
        if (socket != null) {
            try {
                Path path = Path.of(socket);
                if (Files.exists(path, LinkOption.NOFOLLOW_LINKS) && !Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)
                        && !Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                    Files.delete(path);
                }
            } catch (IOException e) {
                // gone already
            }
        }
    }
}
