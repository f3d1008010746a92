package io.kickplug.export.nbd;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An NBD server: one listening socket, an accept thread, a thread pair per connection ({@link Connection}), the
 * exports it offers ({@link Exports}). At most {@code maxConnections} connections at once (0: no limit); one more is
 * closed as soon as it is accepted. With a limit of 1 the exports do not advertise NBD_FLAG_CAN_MULTI_CONN (as QEMU).
 */
public final class NbdServer implements AutoCloseable {

    private static final Logger LOG = System.getLogger(NbdServer.class.getName());

    private final Listener listener;
    private final int maxConnections;
    private final Exports exports;
    private final ServerSocketChannel channel;
    private final int boundPort;
    private final BufferPool pool = new BufferPool();
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final Thread acceptThread;
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private volatile boolean closing;

    /** What {@code kp:nbd-server} shows. */
    public record Status(String address, int maxConnections, int connections, long accepted, long refused) {
    }

    NbdServer(Listener listener, int maxConnections, Exports exports) throws IOException {
        if (maxConnections < 0) {
            throw new IllegalArgumentException("max-connections " + maxConnections + " is negative");
        }
        this.listener = listener;
        this.maxConnections = maxConnections;
        this.exports = exports;
        this.channel = listener.open();
        this.boundPort = channel.getLocalAddress() instanceof InetSocketAddress a ? a.getPort() : -1;
        this.acceptThread = new Thread(this::acceptLoop, "kickplug-nbd-accept");
        this.acceptThread.setDaemon(true);
        this.acceptThread.start();
        LOG.log(Level.INFO, "NBD server listening on " + listener.describe(boundPort));
    }

    Listener listener() {
        return listener;
    }

    /** The TCP port bound (the one asked for, or the one the system chose for port 0); -1 for a Unix socket. */
    int boundPort() {
        return boundPort;
    }

    boolean multiConn() {
        return maxConnections != 1;
    }

    Status status() {
        return new Status(listener.describe(boundPort), maxConnections, connections.size(), accepted.get(),
                refused.get());
    }

    /** The connections now of export {@code name}. */
    int connectionsOf(String name) {
        int n = 0;
        for (Connection c : connections) {
            NbdExport e = c.export();
            if (e != null && e.name().equals(name)) {
                n++;
            }
        }
        return n;
    }

    private void acceptLoop() {
        while (!closing) {
            SocketChannel client;
            try {
                client = channel.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (!closing) {
                    LOG.log(Level.ERROR, "NBD server on " + listener.describe(boundPort) + ": accept failed, the server"
                            + " stops listening: " + e);
                }
                return;
            }
            long number = accepted.incrementAndGet();
            if (closing || maxConnections > 0 && connections.size() >= maxConnections) {
                refused.incrementAndGet();
                LOG.log(Level.WARNING, "NBD server: connection " + number + " refused (" + connections.size()
                        + " of at most " + maxConnections + " connections open)");
                try {
                    client.close();
                } catch (IOException e) {
                    // closed
                }
                continue;
            }
            String peer = "nbd connection " + number;
            Connection[] self = new Connection[1];
            Connection c = new Connection(client, exports, multiConn(), peer, pool, () -> connections.remove(self[0]));
            self[0] = c;
            connections.add(c);
            Thread t = new Thread(c, "kickplug-nbd-" + number);
            t.setDaemon(true);
            t.start();
        }
    }

    /**
     * Ends the connections of export {@code name}: they stop reading, answer what is in flight, and close. Waits for
     * them (bounded).
     */
    void disconnect(String name) {
        List<Connection> of = new ArrayList<>();
        for (Connection c : connections) {
            NbdExport e = c.export();
            if (e != null && e.name().equals(name)) {
                of.add(c);
            }
        }
        of.forEach(Connection::shutdown);
        awaitGone(of);
    }

    private static void awaitGone(List<Connection> of) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (Connection c : of) {
            if (!c.awaitEnd(deadline - System.nanoTime())) {
                LOG.log(Level.ERROR, c.peer() + " did not end in 60 s");
            }
        }
    }

    /** Stops listening, ends every connection (answering what is in flight), removes a Unix socket file. */
    @Override
    public void close() {
        closing = true;
        try {
            channel.close();
        } catch (IOException e) {
            // closed
        }
        try {
            acceptThread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<Connection> all = new ArrayList<>(connections);
        all.forEach(Connection::shutdown);
        awaitGone(all);
        listener.cleanUp();
        LOG.log(Level.INFO, "NBD server on " + listener.describe(boundPort) + " stopped");
    }
}
