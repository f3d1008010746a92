package io.kickplug.qmp;

import java.io.InputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

/**
 * QMP monitors on Unix sockets (qemu-storage-daemon's {@code --chardev socket,...,server=on,wait=off --monitor
 * chardev=...}): each client gets the greeting, must negotiate with {@code qmp_capabilities} first (QEMU's
 * capabilities negotiation mode), then its commands run on the engine one at a time; events go to every client
 * that negotiated, on every monitor. Several clients at once; a client's malformed JSON answers one GenericError and
 * its connection goes on; a client that goes away mid-command leaves the command to finish and the rest alone.
 */
public final class QmpMonitors implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(QmpMonitors.class.getName());

    private final BiFunction<Object, Boolean, QmpEngine.Reply> engine;
    private final Map<String, Object> greeting;
    private final Runnable quit;
    private final Map<Path, Monitor> monitors = new LinkedHashMap<>();
    private final Set<Session> sessions = ConcurrentHashMap.newKeySet();

    /**
     * @param engine runs one parsed request (keyval off) and answers it
     * @param version query-version's answer, for the greeting
     * @param quit ends the runtime, after the reply to quit is sent
     */
    public QmpMonitors(BiFunction<Object, Boolean, QmpEngine.Reply> engine, Map<String, Object> version,
            Runnable quit) {
        this.engine = engine;
        Map<String, Object> qmp = new LinkedHashMap<>();
        qmp.put("version", version);
        qmp.put("capabilities", List.of("oob"));
        this.greeting = Map.of("QMP", qmp);
        this.quit = quit;
    }

    /** A monitor listening on {@code path} (made 0600; a stale socket there is replaced, another file is not). */
    public synchronized void start(Path path) throws IOException {
        Path p = path.toAbsolutePath().normalize();
        if (monitors.containsKey(p)) {
            throw new IllegalStateException("a QMP monitor listens on " + p + " already");
        }
        if (Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            if (!isSocket(p)) {
                throw new IOException(p + " exists and is not a socket");
            }
            Files.delete(p);
        }
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            server.bind(UnixDomainSocketAddress.of(p));
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
        Monitor m = new Monitor(p, server);
        monitors.put(p, m);
        m.thread.start();
    }

    private static boolean isSocket(Path p) {
        try {
            Object type = Files.getAttribute(p, "unix:mode", java.nio.file.LinkOption.NOFOLLOW_LINKS);
            return type instanceof Integer mode && (mode & 0170000) == 0140000;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }

    /** Stops the monitor on {@code path}: its clients are disconnected and the socket removed. */
    public synchronized void stop(Path path) {
        Monitor m = monitors.remove(path.toAbsolutePath().normalize());
        if (m == null) {
            throw new IllegalArgumentException("no QMP monitor listens on " + path);
        }
        m.close();
    }

    /** The monitors' socket paths and their connected clients. */
    public synchronized Map<Path, Integer> list() {
        Map<Path, Integer> out = new LinkedHashMap<>();
        monitors.forEach((p, m) -> out.put(p, (int) sessions.stream().filter(s -> s.monitor == m).count()));
        return out;
    }

    /** Sends events to every client that negotiated capabilities. */
    public void broadcast(List<Map<String, Object>> events) {
        for (Map<String, Object> e : events) {
            String line = Json.write(e);
            for (Session s : sessions) {
                if (s.negotiated) {
                    s.send(line);
                }
            }
        }
    }

    @Override
    public synchronized void close() {
        monitors.values().forEach(Monitor::close);
        monitors.clear();
    }

    private final class Monitor {
        final Path path;
        final ServerSocketChannel server;
        final Thread thread;
        final List<Session> mine = new ArrayList<>();

        Monitor(Path path, ServerSocketChannel server) {
            this.path = path;
            this.server = server;
            this.thread = new Thread(this::accept, "kickplug-qmp-" + path.getFileName());
            this.thread.setDaemon(true);
        }

        private void accept() {
            while (server.isOpen()) {
                SocketChannel c;
                try {
                    c = server.accept();
                } catch (IOException e) {
                    return; // closed
                }
                Session s = new Session(this, c);
                synchronized (mine) {
                    mine.add(s);
                }
                sessions.add(s);
                Thread t = new Thread(s::run, "kickplug-qmp-client");
                t.setDaemon(true);
                t.start();
            }
        }

        void close() {
            try {
                server.close();
            } catch (IOException e) {
                // closing
            }
            List<Session> all;
            synchronized (mine) {
                all = new ArrayList<>(mine);
            }
            all.forEach(Session::close);
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "cannot remove " + path + ": " + e.getMessage());
            }
        }
    }

    private final class Session {
        final Monitor monitor;
        final SocketChannel channel;
        volatile boolean negotiated;

        Session(Monitor monitor, SocketChannel channel) {
            this.monitor = monitor;
            this.channel = channel;
        }

        void run() {
            // Reads straight from the channel too (see send), decoding UTF-8 across reads.
            try (Reader in = new InputStreamReader(new InputStream() {
                private final ByteBuffer buf = ByteBuffer.allocate(8192).flip();

                @Override
                public int read() throws IOException {
                    if (!buf.hasRemaining()) {
                        buf.clear();
                        int n = channel.read(buf);
                        buf.flip();
                        if (n < 0) {
                            return -1;
                        }
                    }
                    return buf.get() & 0xff;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    if (len == 0) {
                        return 0;
                    }
                    if (!buf.hasRemaining()) {
                        buf.clear();
                        int n = channel.read(buf);
                        buf.flip();
                        if (n < 0) {
                            return -1;
                        }
                    }
                    int k = Math.min(len, buf.remaining());
                    buf.get(b, off, k);
                    return k;
                }
            }, StandardCharsets.UTF_8)) {
                send(Json.write(greeting));
                JsonSplitter splitter = new JsonSplitter(this::handle);
                int c;
                while ((c = in.read()) >= 0) {
                    splitter.feed((char) c);
                }
            } catch (IOException e) {
                // the client went away
            } finally {
                close();
            }
        }

        private void handle(String text) {
            Object request;
            try {
                request = Json.parse(text);
            } catch (Json.ParseException e) {
                send(Json.write(Map.of("error", QmpError.generic("JSON parse error, " + e.getMessage()).body())));
                return;
            }
            QmpEngine.Reply reply;
            String name = request instanceof Map<?, ?> m && m.get("execute") instanceof String s ? s : null;
            if (!negotiated && !"qmp_capabilities".equals(name) && name != null) {
                reply = refused(request, "Expecting capabilities negotiation with 'qmp_capabilities'");
            } else if (negotiated && "qmp_capabilities".equals(name)) {
                reply = refused(request, "Capabilities negotiation is already complete, command ignored");
            } else {
                reply = engine.apply(request, false);
                if ("qmp_capabilities".equals(name) && reply.response().containsKey("return")) {
                    negotiated = true;
                }
            }
            // qemu-storage-daemon emits a command's events while it runs: they come before its answer.
            broadcast(reply.events());
            send(Json.write(reply.response()));
            if (reply.quit()) {
                quit.run();
            }
        }

        private QmpEngine.Reply refused(Object request, String desc) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("error", new QmpError(QmpError.COMMAND_NOT_FOUND, desc).body());
            Object id = ((Map<?, ?>) request).get("id");
            if (id != null) {
                r.put("id", id);
            }
            return new QmpEngine.Reply(r, List.of(), false);
        }

        void send(String line) {
            // Straight to the channel: Channels.newOutputStream would wait for the channel's blocking lock, which
            // the session's reader holds while it waits for input, so an event to an idle client would hang.
            ByteBuffer bytes = ByteBuffer.wrap((line + "\r\n").getBytes(StandardCharsets.UTF_8));
            synchronized (this) {
                try {
                    while (bytes.hasRemaining()) {
                        channel.write(bytes);
                    }
                } catch (IOException e) {
                    close(); // gone: the command's effect stays, its answer is lost
                }
            }
        }

        void close() {
            sessions.remove(this);
            synchronized (monitor.mine) {
                monitor.mine.remove(this);
            }
            try {
                channel.close();
            } catch (IOException e) {
                // closing
            }
        }
    }
}
