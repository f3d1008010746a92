package io.kickplug.nbd;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendIo;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * A disk on an NBD server: the client side of the NBD protocol (the NBD project's {@code doc/proto.md}) behind the
 * asynchronous backend contract. No TLS.
 *
 * <ul>
 * <li><b>Connections.</b> One, or {@link Options#connections} when the server offers NBD_FLAG_CAN_MULTI_CONN (its
 * promise that a flush on one connection covers the writes completed on all). Each has a writer thread, which
 * sends the commands of the shared queue in batches (one gathered write per batch, woken by
 * {@link #unplug()}), and a reader thread, which reads the replies ({@link ReplyReader}) and completes the commands
 * by their cookie; many commands are in flight on each.</li>
 * <li><b>Commands.</b> READ, WRITE (with FUA when the server offers it), FLUSH (a no-op success when the server does
 * not offer it: it has no write cache to flush), TRIM, WRITE_ZEROES (NBD_CMD_FLAG_NO_HOLE unless the device allows
 * unmapping: virtio-blk's UNMAP flag). Offsets and lengths must be multiples of the server's minimum block size,
 * and READ/WRITE payloads at most its maximum; a request that is not fails with a clear error.</li>
 * <li><b>Failures.</b> A connection that drops (or stays silent for {@link Options#requestTimeoutMs}) is reconnected;
 * its commands in flight are sent again on the first live connection, up to {@link #MAX_ATTEMPTS} times each (a
 * send whose write failed, so that the server never had the command, does not count).
 * While no connection is up, new commands wait; after {@link Options#reconnectTimeoutMs} without one, every waiting
 * command fails with an error naming the server, and so does every new one until a connection is back. A reply
 * that breaks the protocol ends its connection and fails that connection's commands at once with the reason (they
 * are not sent again: the server cannot be trusted with them); a refused export is an error at open.</li>
 * </ul>
 */
public final class NbdBackend implements AsyncBlockBackend {

    private static final Logger LOG = System.getLogger(NbdBackend.class.getName());
    /** How many times a command is sent before it fails (a server that drops the connection on it each time). */
    static final int MAX_ATTEMPTS = 3;
    /** The most commands one connection takes into one batch (and one gathered write). */
    private static final int BATCH = 64;

    /**
     * @param connections connections to open when the server offers multi-conn (1 otherwise)
     * @param reconnectTimeoutMs how long commands wait for a connection before they fail
     * @param requestTimeoutMs how long a connection may leave its oldest command without a reply
     * @param handshakeTimeoutMs how long a connect and handshake may take
     */
    public record Options(int connections, long reconnectTimeoutMs, long requestTimeoutMs, long handshakeTimeoutMs) {
        public static final Options DEFAULTS = new Options(4, 10_000, 30_000, 10_000);

        public Options {
            if (connections < 1 || connections > 16) {
                throw new IllegalArgumentException("connections " + connections + " is not in 1..16");
            }
        }
    }

    private final NbdUri uri;
    private final Options options;
    private final boolean readOnly;
    private final ExportInfo info;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    /** Commands waiting for a connection's writer; under lock. */
    private final ArrayDeque<Command> pending = new ArrayDeque<>();
    /** Commands submitted since the last unplug (not yet visible to writers); under lock. */
    private final ArrayDeque<Command> plugged = new ArrayDeque<>();
    private final ArrayDeque<Command> free = new ArrayDeque<>();
    private final List<Connection> connections = new ArrayList<>();
    private final Thread watchdog;
    private volatile boolean closed;
    /** How long a clean close waits for each connection's writer to send NBD_CMD_DISC. */
    private static final long DISC_WAIT_MS = 1000;
    /** Live connections; under lock. */
    private int live;
    /** When the last connection went down (System.nanoTime), valid while {@code live == 0}; under lock. */
    private long downSince;
    /** No connection for longer than the reconnect timeout: commands fail at once. Under lock. */
    private boolean unreachable;
    private volatile String lastError = "";
    /** Commands sent again after their connection dropped; under lock. */
    private long resubmitted;

    /**
     * Connects, negotiates the export and starts the connections' threads.
     *
     * @throws IOException when the server cannot be reached, is not an NBD server or refuses the export
     */
    public static NbdBackend open(NbdUri uri, boolean readOnly, Options options) throws IOException {
        SocketChannel channel = ServerDial.connect(uri, options.handshakeTimeoutMs());
        ExportInfo info;
        try {
            info = ServerDial.handshake(channel, uri, options.handshakeTimeoutMs());
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        return new NbdBackend(uri, readOnly, options, channel, info);
    }

    private NbdBackend(NbdUri uri, boolean readOnly, Options options, SocketChannel first, ExportInfo info) {
        this.uri = uri;
        this.options = options;
        this.info = info;
        this.readOnly = readOnly || info.readOnly();
        int count = info.multiConn() ? options.connections() : 1;
        for (int i = 0; i < count; i++) {
            connections.add(new Connection(i));
        }
        watchdog = new Thread(this::watch, "kickplug-nbd-watchdog");
        watchdog.setDaemon(true);
        lock.lock();
        try {
            downSince = System.nanoTime();
        } finally {
            lock.unlock();
        }
        connections.get(0).start(first);
        for (int i = 1; i < count; i++) {
            connections.get(i).start(null);
        }
        watchdog.start();
    }

    @Override
    public String kind() {
        return "nbd";
    }

    @Override
    public long size() {
        return info.size();
    }

    @Override
    public boolean readOnly() {
        return readOnly;
    }

    @Override
    public boolean supportsDiscard() {
        return info.has(Nbd.FLAG_SEND_TRIM) && !readOnly;
    }

    @Override
    public boolean supportsWriteZeroes() {
        return info.has(Nbd.FLAG_SEND_WRITE_ZEROES) && !readOnly;
    }

    @Override
    public boolean supportsFua() {
        return info.has(Nbd.FLAG_SEND_FUA);
    }

    /** What the server said about the export. */
    public ExportInfo info() {
        return info;
    }

    public NbdUri uri() {
        return uri;
    }

    /** Connections that are up now. */
    public int liveConnections() {
        return (int) readLocked(() -> live);
    }

    /** Commands sent again after their connection dropped, since open. */
    public long resubmitted() {
        return readLocked(() -> resubmitted);
    }

    /** A counter guarded by {@code lock}, read under it (status calls, not the request path). */
    private long readLocked(LongSupplier field) {
        lock.lock();
        try {
            return field.getAsLong();
        } finally {
            lock.unlock();
        }
    }

    /** Connections this backend keeps (1, or more with multi-conn). */
    public int connections() {
        return connections.size();
    }

    @Override
    public void submit(BackendIo io) {
        if ((io.op() == BackendIo.Op.READ || io.op() == BackendIo.Op.WRITE) && io.length() > info.maxPayload()
                && Requests.refusal(io, info, readOnly) == null) {
            // Longer than the server takes in one command: sent as several (a multiple of the minimum block each).
            long part = Math.max(info.minBlock(), info.maxPayload() - info.maxPayload() % info.minBlock());
            for (BackendIo p : SplitIo.parts(io, part)) {
                submit(p);
            }
            return;
        }
        String refusal = Requests.refusal(io, info, readOnly);
        if (refusal != null) {
            io.complete(new IOException("NBD " + uri + ": " + refusal));
            return;
        }
        if (io.op() == BackendIo.Op.FLUSH && !info.has(Nbd.FLAG_SEND_FLUSH)) {
            io.complete(null); // proto.md: no NBD_FLAG_SEND_FLUSH, no cache to flush
            return;
        }
        IOException fail = null;
        lock.lock();
        try {
            if (closed) {
                fail = new IOException("NBD " + uri + ": the backend is closed");
            } else if (unreachable) {
                fail = new IOException("NBD server " + uri + " is unreachable: " + lastError);
            } else {
                Command c = free.poll();
                if (c == null) {
                    c = new Command();
                }
                int type = Requests.type(io.op());
                int flags = Requests.flags(io, type, info);
                c.reset(io, type, flags, type == Nbd.CMD_FLUSH ? 0 : io.offset(), (int) io.length());
                plugged.add(c);
            }
        } finally {
            lock.unlock();
        }
        if (fail != null) {
            io.complete(fail);
        }
    }

    @Override
    public void unplug() {
        lock.lock();
        try {
            if (!plugged.isEmpty()) {
                pending.addAll(plugged);
                plugged.clear();
                work.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        List<Command> failed = new ArrayList<>();
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            work.signalAll();
        } finally {
            lock.unlock();
        }
        watchdog.interrupt();
        for (Connection c : connections) {
            c.awaitDisconnect(); // proto.md: NBD_CMD_DISC, sent by the writer, before the channel closes
        }
        for (Connection c : connections) {
            c.stop();
        }
        for (Connection c : connections) {
            c.join();
        }
        lock.lock();
        try {
            failed.addAll(plugged);
            failed.addAll(pending);
            plugged.clear();
            pending.clear();
        } finally {
            lock.unlock();
        }
        for (Command c : failed) {
            c.io.complete(new IOException("NBD " + uri + ": the backend was closed"));
        }
    }

    /** Fails every waiting command once no connection has been up for the reconnect timeout; checks timeouts. */
    private void watch() {
        while (!closed) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
            List<Command> expired = null;
            lock.lock();
            try {
                if (live == 0 && !unreachable
                        && System.nanoTime() - downSince > TimeUnit.MILLISECONDS.toNanos(options.reconnectTimeoutMs())) {
                    unreachable = true;
                    expired = new ArrayList<>(pending);
                    expired.addAll(plugged);
                    pending.clear();
                    plugged.clear();
                }
            } finally {
                lock.unlock();
            }
            if (expired != null) {
                LOG.log(Level.ERROR, "NBD server " + uri + " unreachable for " + options.reconnectTimeoutMs()
                        + " ms; failing " + expired.size() + " requests and new ones until it is back: " + lastError);
                for (Command c : expired) {
                    BackendIo io = c.io;
                    recycle(c);
                    io.complete(new IOException("NBD server " + uri + " unreachable for " + options.reconnectTimeoutMs()
                            + " ms: " + lastError));
                }
            }
            for (Connection c : connections) {
                c.checkSilence();
            }
        }
    }

    private void recycle(Command c) {
        c.io = null;
        lock.lock();
        try {
            if (free.size() < 4096) {
                free.add(c);
            }
        } finally {
            lock.unlock();
        }
    }

    /** One connection: its channel, its commands in flight, its writer and reader (supervisor) threads. */
    private final class Connection implements ReplyReader.Table {

        private final int index;
        private final String where;
        private final InFlightTable inFlight = new InFlightTable();
        private volatile SocketChannel channel;
        private volatile boolean up;
        /** Why another thread closed the channel (silence, a failed write), for the reader's report. */
        private volatile String closeReason;
        private Thread supervisor;
        private volatile Thread writer;
        private final ByteBuffer send = ByteBuffer.allocateDirect(256 * 1024);
        /** Batches the writers of this connection registered so far (each batch's number); writer threads only. */
        private long batches;
        /**
         * The last batch written out whole. Written by the writer; read by the reader's {@link #fail} after it joined
         * that writer, which orders the write before the read.
         */
        private long written;

        Connection(int index) {
            this.index = index;
            this.where = "NBD server " + uri + (connections.size() > 0 || index > 0 ? " (connection " + index + ")" : "");
        }

        void start(SocketChannel first) {
            supervisor = new Thread(() -> supervise(first), "kickplug-nbd-conn" + index);
            supervisor.setDaemon(true);
            supervisor.start();
        }

        /** Waits (briefly) for the writer, which sends NBD_CMD_DISC on a live connection when the backend closes. */
        void awaitDisconnect() {
            Thread w = writer;
            if (w != null) {
                try {
                    w.join(DISC_WAIT_MS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        void stop() {
            SocketChannel ch = channel;
            if (ch != null && up) {
                try {
                    ch.close();
                } catch (IOException e) {
                    // closing anyway
                }
            }
            supervisor.interrupt();
        }

        void join() {
            try {
                supervisor.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Connects, serves, and reconnects after a failure until the backend closes. */
        private void supervise(SocketChannel first) {
            SocketChannel ch = first;
            int failures = 0;
            boolean served = false;
            while (!closed) {
                if (ch == null) {
                    try {
                        ch = ServerDial.connect(uri, options.handshakeTimeoutMs());
                        ExportInfo again = ServerDial.handshake(ch, uri, options.handshakeTimeoutMs());
                        if (again.size() != info.size()) {
                            throw new NbdRefusedException("the export's size changed from " + info.size() + " to "
                                    + again.size() + " bytes");
                        }
                        if (again.structured() != info.structured()) {
                            throw new NbdRefusedException("the server changed its structured-reply support");
                        }
                        LOG.log(Level.INFO, where + (served ? ": connected again" : ": connected"));
                    } catch (IOException | RuntimeException e) {
                        lastError = e.getMessage();
                        ServerDial.closeQuietly(ch);
                        ch = null;
                        failures++;
                        if (!backoff(failures)) {
                            return;
                        }
                        continue;
                    }
                }
                failures = 0;
                served = true;
                serve(ch);
                ch = null;
                if (!closed && !backoff(1)) {
                    return;
                }
            }
        }

        private boolean backoff(int failures) {
            long ms = Math.min(1000, 50L << Math.min(failures, 5));
            try {
                Thread.sleep(ms);
                return !closed;
            } catch (InterruptedException e) {
                return false;
            }
        }

        /** Runs one connection: a writer thread, and the replies read here, until the connection fails. */
        private void serve(SocketChannel ch) {
            channel = ch;
            closeReason = null;
            lock.lock();
            try {
                if (closed) {
                    ServerDial.closeQuietly(ch);
                    return;
                }
                up = true;
                live++;
                unreachable = false;
            } finally {
                lock.unlock();
            }
            writer = new Thread(() -> write(ch), "kickplug-nbd-conn" + index + "-writer");
            writer.setDaemon(true);
            writer.start();
            ReplyReader reader = new ReplyReader(ch, info.structured(), info.maxPayload(), where, this);
            IOException cause;
            try {
                for (;;) {
                    reader.readOne();
                }
            } catch (IOException e) {
                cause = e;
            } catch (RuntimeException e) {
                cause = new NbdProtocolException(where + ": " + e);
            }
            String reason = closeReason;
            if (reason != null && !(cause instanceof NbdProtocolException)) {
                cause = new IOException(where + ": " + reason, cause);
            }
            ServerDial.closeQuietly(ch);
            lock.lock();
            try {
                up = false;
                live--;
                if (live == 0) {
                    downSince = System.nanoTime();
                }
                work.signalAll(); // the writer leaves
            } finally {
                lock.unlock();
            }
            try {
                writer.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            fail(cause);
        }

        /** The connection ended: its commands go back to the queue, or fail (protocol error, closed, too many tries). */
        private void fail(IOException cause) {
            boolean protocol = cause instanceof NbdProtocolException;
            String message = cause.getMessage() == null ? cause.toString() : cause.getMessage();
            if (!closed) {
                lastError = message;
                LOG.log(protocol ? Level.ERROR : Level.WARNING, where + ": connection lost: " + message);
            }
            List<Command> orphans = inFlight.drain();
            List<Command> failed = new ArrayList<>();
            lock.lock();
            try {
                for (int i = orphans.size() - 1; i >= 0; i--) {
                    Command c = orphans.get(i);
                    c.cookie = 0;
                    c.received = 0;
                    c.error = null;
                    // A send counts only when its batch reached the server: a batch whose write failed (a dead
                    // connection that took commands another dead one handed back) cannot have been what made the
                    // server drop the connection, and one server kill must not use up several of MAX_ATTEMPTS.
                    boolean reached = c.batch <= written;
                    if (closed || protocol || unreachable || reached && ++c.attempts >= MAX_ATTEMPTS) {
                        failed.add(c);
                    } else {
                        pending.addFirst(c); // sent again, oldest first, on the first live connection
                        resubmitted++;
                    }
                }
                work.signalAll();
            } finally {
                lock.unlock();
            }
            for (Command c : failed) {
                BackendIo io = c.io;
                String why = closed ? "the backend was closed" : protocol ? message
                        : c.attempts >= MAX_ATTEMPTS ? "the connection failed " + c.attempts + " times while the request was in flight: " + message
                        : message;
                recycle(c);
                io.complete(new IOException(why));
            }
        }

        /** The writer: takes batches of commands, registers them, sends them in one write. */
        private void write(SocketChannel ch) {
            Command[] batch = new Command[BATCH];
            try {
                while (true) {
                    int n = 0;
                    boolean disconnect;
                    lock.lock();
                    try {
                        while (up && !closed && pending.isEmpty()) {
                            work.awaitUninterruptibly();
                        }
                        disconnect = up && closed;
                        if (!up || closed) {
                            n = -1;
                        } else {
                            while (n < BATCH && !pending.isEmpty()) {
                                batch[n++] = pending.poll();
                            }
                            if (!pending.isEmpty()) {
                                work.signal(); // another connection may take the rest
                            }
                        }
                    } finally {
                        lock.unlock();
                    }
                    if (n < 0) {
                        if (disconnect) {
                            disconnect(ch);
                        }
                        return;
                    }
                    long now = System.nanoTime();
                    long number = ++batches;
                    for (int i = 0; i < n; i++) {
                        batch[i].batch = number; // before the registration makes it the reader's
                        inFlight.register(batch[i], now);
                    }
                    send.clear();
                    for (int i = 0; i < n; i++) {
                        encode(ch, batch[i]);
                        batch[i] = null;
                    }
                    flush(ch);
                    written = number;
                }
            } catch (IOException e) {
                // The reader sees the closed channel and fails the connection (it alone takes commands out).
                if (closeReason == null) {
                    closeReason = "a write failed: " + e.getMessage();
                }
                ServerDial.closeQuietly(ch);
            }
        }

        /**
         * proto.md, NBD_CMD_DISC: the backend closes cleanly, so the server is told (it handles what is
         * outstanding and closes); nothing is sent after it. The reader then sees the server close.
         */
        private void disconnect(SocketChannel ch) throws IOException {
            send.clear();
            send.putInt(Nbd.REQUEST_MAGIC).putShort((short) 0).putShort((short) Nbd.CMD_DISC).putLong(0).putLong(0)
                    .putInt(0);
            flush(ch);
            LOG.log(Level.DEBUG, where + ": NBD_CMD_DISC sent");
        }

        private void encode(SocketChannel ch, Command c) throws IOException {
            if (send.remaining() < Nbd.REQUEST_BYTES) {
                flush(ch);
            }
            send.putInt(Nbd.REQUEST_MAGIC).putShort((short) c.flags).putShort((short) c.type).putLong(c.cookie)
                    .putLong(c.offset).putInt(c.length);
            if (c.type == Nbd.CMD_WRITE) {
                int done = 0;
                while (done < c.length) {
                    if (!send.hasRemaining()) {
                        flush(ch);
                    }
                    int n = Math.min(send.remaining(), c.length - done);
                    c.copyOut(done, n, send);
                    done += n;
                }
            }
        }

        private void flush(SocketChannel ch) throws IOException {
            send.flip();
            while (send.hasRemaining()) {
                ch.write(send);
            }
            send.clear();
        }

        @Override
        public Command lookup(long cookie) {
            return inFlight.lookup(cookie);
        }

        @Override
        public void done(Command c, IOException error) {
            inFlight.remove(c);
            BackendIo io = c.io;
            recycle(c);
            io.complete(error);
        }

        /** Closes a connection whose oldest command has waited longer than the request timeout (the reader fails it). */
        void checkSilence() {
            if (!up) {
                return;
            }
            long oldest = inFlight.oldestSentNanos();
            if (oldest == Long.MAX_VALUE) {
                return;
            }
            if (System.nanoTime() - oldest > TimeUnit.MILLISECONDS.toNanos(options.requestTimeoutMs())) {
                closeReason = "no reply in " + options.requestTimeoutMs() + " ms";
                LOG.log(Level.WARNING, where + ": no reply in " + options.requestTimeoutMs() + " ms; reconnecting");
                ServerDial.closeQuietly(channel);
            }
        }
    }
}
