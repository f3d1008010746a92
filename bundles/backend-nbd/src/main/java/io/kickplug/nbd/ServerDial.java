package io.kickplug.nbd;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.SocketChannel;

/** Reaching an NBD server: the connection (Unix or TCP) and the handshake, bounded in time. */
final class ServerDial {

    private ServerDial() {
    }

    static SocketChannel connect(NbdUri uri, long timeoutMs) throws IOException {
        SocketAddress target = uri.address();
        SocketChannel channel;
        if (uri.unix()) {
            channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        } else {
            InetSocketAddress unresolved = (InetSocketAddress) target;
            target = new InetSocketAddress(unresolved.getHostString(), unresolved.getPort());
            channel = SocketChannel.open();
        }
        try {
            channel.connect(target);
            if (!uri.unix()) {
                channel.socket().setTcpNoDelay(true);
            }
            return channel;
        } catch (IOException e) {
            channel.close();
            throw new IOException("cannot connect to the NBD server of " + uri + ": " + e.getMessage(), e);
        }
    }

    /** The handshake, bounded in time: a server that says nothing has its connection closed after the timeout. */
    static ExportInfo handshake(SocketChannel channel, NbdUri uri, long timeoutMs) throws IOException {
        Thread guard = new Thread(() -> {
            try {
                Thread.sleep(timeoutMs);
                channel.close();
            } catch (InterruptedException | IOException e) {
                // handshake done (interrupted) or already closed
            }
        }, "kickplug-nbd-handshake-guard");
        guard.setDaemon(true);
        guard.start();
        try {
            return new Handshake(channel, "NBD server " + uri).negotiate(uri.export());
        } catch (java.nio.channels.AsynchronousCloseException e) {
            throw new IOException("NBD server " + uri + " did not complete the handshake in " + timeoutMs + " ms");
        } finally {
            guard.interrupt();
        }
    }

    static void closeQuietly(SocketChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                // nothing to do
            }
        }
    }
}
