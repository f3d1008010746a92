package io.kickplug.launcher;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channel;
import java.nio.channels.Channels;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The daemon's control socket: each client sends statements, one per line, and gets one JSON object per
 * line back, {@code {"ok":true,"result":R}} or {@code {"ok":false,"error":"..."}}. R is {@code null} when the
 * statement printed nothing, the printed JSON value itself when a command printed JSON ({@code --json}), and
 * the printed text as a JSON string otherwise.
 *
 * <p>Threads: one accepting thread (the daemon's main thread, {@link #acceptUntilClosed}, or one of its own,
 * {@link #start}), and one per connected client (statements of one client run one at a
 * time, in order, in the client's own session). Input is untrusted: a line longer than
 * {@link #MAX_LINE_BYTES} is read to its end, dropped and answered with an error; a client beyond
 * {@link #maxClients} is answered with an error and disconnected; a client that goes away mid-statement
 * only loses its answer.
 */
final class ControlServer implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger("kickplug.control");
    static final int MAX_LINE_BYTES = Integer.getInteger("kickplug.control.maxLineBytes", 64 * 1024);
    static final int DEFAULT_MAX_CLIENTS = Integer.getInteger("kickplug.control.maxClients", 128);

    /** Where statements run; one {@link Session} per client. */
    interface Statements {
        Session open() throws Exception;
    }

    /** A client's session: runs a statement and returns what it printed (null when nothing). */
    interface Session extends AutoCloseable {
        String run(String statement) throws Exception;

        @Override
        void close();
    }

    private final Path path;
    private final ServerSocketChannel server;
    private final Statements statements;
    private final int maxClients;
    private final Set<SocketChannel> clients = ConcurrentHashMap.newKeySet();
    private final AtomicLong clientIds = new AtomicLong();
    private volatile boolean closed;

    private ControlServer(Path path, ServerSocketChannel server, Statements statements, int maxClients) {
        this.path = path;
        this.server = server;
        this.statements = statements;
        this.maxClients = maxClients;
    }

    /**
     * Binds {@code path} (see {@link ControlSocket#bind}); clients that connect wait in the socket's backlog until
     * a thread accepts them ({@link #acceptUntilClosed}).
     */
    static ControlServer bind(Path path, Statements statements, int maxClients) throws IOException {
        ControlServer s = new ControlServer(path.toAbsolutePath(), ControlSocket.bind(path), statements, maxClients);
        LOG.info(() -> "listening on " + s.path);
        return s;
    }

    /** Binds {@code path} and accepts on a thread of its own ({@code kickplug-control}). */
    static ControlServer start(Path path, Statements statements, int maxClients) throws IOException {
        ControlServer s = bind(path, statements, maxClients);
        Thread acceptor = new Thread(s::acceptUntilClosed, "kickplug-control");
        acceptor.setDaemon(true);
        acceptor.start();
        return s;
    }

    Path path() {
        return path;
    }

    /** Clients connected now. */
    int clients() {
        return clients.size();
    }

    /** Accepts clients on the calling thread until {@link #close} (or accepting fails). */
    void acceptUntilClosed() {
        while (!closed) {
            SocketChannel client;
            try {
                client = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (!closed) {
                    LOG.severe(() -> "accept failed, the control socket stops: " + e.getMessage());
                }
                return;
            }
            long id = clientIds.incrementAndGet();
            if (clients.size() >= maxClients) {
                LOG.warning(() -> "client " + id + " refused: " + maxClients + " clients connected");
                refuse(client, "too many clients (" + maxClients + ")");
                continue;
            }
            clients.add(client);
            Thread t = new Thread(() -> serve(id, client), "kickplug-control-" + id);
            t.setDaemon(true);
            try {
                t.start();
            } catch (OutOfMemoryError | RuntimeException e) {
                clients.remove(client);
                LOG.warning(() -> "client " + id + " refused: cannot start its thread: " + e);
                refuse(client, "cannot serve another client now");
            }
        }
    }

    private static void refuse(SocketChannel client, String why) {
        try (client) {
            write(Channels.newOutputStream(client), error(why));
        } catch (IOException e) {
            // it has gone already
        }
    }

    private void serve(long id, SocketChannel client) {
        LOG.fine(() -> "client " + id + " connected");
        long count = 0;
        Session opened;
        try {
            opened = statements.open();
        } catch (Exception | LinkageError e) {
            LOG.warning(() -> "client " + id + ": cannot open a session: " + Errors.message(e));
            clients.remove(client);
            refuse(client, "cannot open a session: " + Errors.message(e));
            return;
        }
        try (client; Session session = opened) {
            LineReader reader = new LineReader(Channels.newInputStream(client), MAX_LINE_BYTES);
            OutputStream out = Channels.newOutputStream(client);
            LineReader.Line line;
            while ((line = reader.next()) != null) {
                String answer;
                if (line.tooLong()) {
                    long bytes = line.bytes();
                    LOG.warning(() -> "client " + id + ": dropped a line of " + bytes + " bytes");
                    answer = error("line longer than " + MAX_LINE_BYTES + " bytes (" + bytes + "); dropped");
                } else if (line.text().isBlank()) {
                    continue;
                } else {
                    answer = run(id, session, line.text().strip());
                }
                count++;
                write(out, answer);
            }
        } catch (IOException e) {
            // The client went away (possibly mid-statement, whose answer is lost) or the daemon is stopping.
            if (!closed) {
                LOG.fine(() -> "client " + id + ": " + e.getMessage());
            }
        } finally {
            clients.remove(client);
            long n = count;
            LOG.fine(() -> "client " + id + " disconnected after " + n + " statements");
        }
    }

    private static String run(long id, Session session, String statement) {
        try {
            String printed = session.run(statement);
            LOG.fine(() -> "client " + id + " ran: " + abbreviate(statement));
            return ok(printed);
        } catch (Exception | StackOverflowError e) {
            LOG.fine(() -> "client " + id + " failed: " + abbreviate(statement) + ": " + Errors.message(e));
            return error(Errors.message(e));
        }
    }

    /** The answer to a statement that printed {@code printed}. */
    static String ok(String printed) {
        if (printed == null || printed.isEmpty()) {
            return "{\"ok\":true,\"result\":null}";
        }
        // What a local run prints ends with a line break; the client prints one after the result.
        String text = printed.endsWith("\n") ? printed.substring(0, printed.length() - 1) : printed;
        String trimmed = text.strip();
        boolean json = (trimmed.startsWith("{") || trimmed.startsWith("[")) && Json.isValue(trimmed);
        return "{\"ok\":true,\"result\":" + (json ? trimmed : Json.quote(text)) + "}";
    }

    static String error(String message) {
        return "{\"ok\":false,\"error\":" + Json.quote(message) + "}";
    }

    private static void write(OutputStream out, String answer) throws IOException {
        // One JSON object per line: Json.quote escapes every line break inside strings, and JSON from a
        // command is joined onto one line here (line breaks between JSON tokens are insignificant).
        String line = answer.indexOf('\n') < 0 && answer.indexOf('\r') < 0 ? answer
                : answer.replace("\r", "").replace("\n", " ");
        out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "...";
    }

    /** Stops accepting, disconnects every client and removes the socket file. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeAnyway(server);
        for (SocketChannel c : clients) {
            closeAnyway(c);
        }
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            LOG.log(Level.WARNING, "cannot remove " + path + ": " + e.getMessage());
        }
    }

    /** Closes {@code channel}, ignoring a failure: the socket is going away either way. */
    private static void closeAnyway(Channel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // closing anyway
        }
    }
}
