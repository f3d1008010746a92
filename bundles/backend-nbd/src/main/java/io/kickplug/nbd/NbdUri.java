package io.kickplug.nbd;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnixDomainSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Where an NBD export is, in the NBD URI form (the NBD project's {@code doc/uri.md}, as QEMU and libnbd read it):
 * {@code nbd://host[:port]/export} (TCP, port 10809 by default) and {@code nbd+unix:///export?socket=PATH} (a Unix
 * socket). The export name is the path without its leading slash, percent-decoded; empty means the default export.
 * {@code nbds://} (TLS) is refused: TLS is out of scope.
 *
 * @param text the URI as given
 * @param address the server's socket address
 * @param export the export name
 */
public record NbdUri(String text, SocketAddress address, String export) {

    public static final int DEFAULT_PORT = 10809;

    /** @throws IllegalArgumentException with a message that says what is wrong */
    public static NbdUri parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("an NBD disk needs a URI: nbd://host[:port]/export or "
                    + "nbd+unix:///export?socket=PATH");
        }
        URI uri;
        try {
            uri = new URI(text.trim());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("'" + text + "' is not a URI: " + e.getMessage());
        }
        String scheme = uri.getScheme();
        if (scheme == null) {
            throw new IllegalArgumentException("'" + text + "' has no scheme; use nbd:// or nbd+unix://");
        }
        String export = exportName(uri);
        switch (scheme) {
            case "nbd", "nbd+tcp": {
                String host = uri.getHost();
                if (host == null || host.isEmpty()) {
                    throw new IllegalArgumentException("'" + text + "' has no host");
                }
                if (uri.getRawQuery() != null) {
                    throw new IllegalArgumentException("'" + text + "': nbd:// takes no query");
                }
                int port = uri.getPort() < 0 ? DEFAULT_PORT : uri.getPort();
                if (port < 1 || port > 65535) {
                    throw new IllegalArgumentException("'" + text + "': port " + port + " is out of range");
                }
                return new NbdUri(text, InetSocketAddress.createUnresolved(host, port), export);
            }
            case "nbd+unix": {
                if (uri.getRawAuthority() != null) {
                    throw new IllegalArgumentException("'" + text + "': nbd+unix takes no host (nbd+unix:///export?socket=PATH)");
                }
                String socket = null;
                String query = uri.getRawQuery();
                if (query != null) {
                    for (String part : query.split("&")) {
                        int eq = part.indexOf('=');
                        String key = eq < 0 ? part : part.substring(0, eq);
                        String value = eq < 0 ? "" : URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8);
                        if (key.equals("socket")) {
                            socket = value;
                        } else {
                            throw new IllegalArgumentException("'" + text + "': unknown query parameter '" + key + "'");
                        }
                    }
                }
                if (socket == null || socket.isEmpty()) {
                    throw new IllegalArgumentException("'" + text + "': nbd+unix needs ?socket=PATH");
                }
                return new NbdUri(text, UnixDomainSocketAddress.of(Path.of(socket)), export);
            }
            case "nbds", "nbds+unix", "nbds+tcp":
                throw new IllegalArgumentException("'" + text + "': TLS (nbds) is not supported by Kickplug's NBD client");
            default:
                throw new IllegalArgumentException("'" + text + "': unknown scheme '" + scheme
                        + "'; use nbd:// or nbd+unix://");
        }
    }

    private static String exportName(URI uri) {
        String path = uri.getPath();
        if (path == null || path.isEmpty() || path.equals("/")) {
            return "";
        }
        String name = path.startsWith("/") ? path.substring(1) : path;
        if (name.getBytes(StandardCharsets.UTF_8).length > 4096) {
            throw new IllegalArgumentException("export name longer than 4096 bytes (proto.md's limit)");
        }
        return name;
    }

    /** Whether the server is reached over a Unix socket. */
    public boolean unix() {
        return address instanceof UnixDomainSocketAddress;
    }

    @Override
    public String toString() {
        return text;
    }
}
