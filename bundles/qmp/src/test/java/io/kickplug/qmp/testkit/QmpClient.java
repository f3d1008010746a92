package io.kickplug.qmp.testkit;

import io.kickplug.qmp.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A small QMP client for tests (QEMU's Python library is not packaged here): connects to a monitor's Unix socket,
 * keeps the greeting, sends command objects and reads until their response, keeping the events that came before
 * it. Works against Kickplug's monitor and qemu-storage-daemon's alike. Reads block: a test sets a timeout around
 * it (the socket has none), and closes the client at the end.
 */
public final class QmpClient implements AutoCloseable {

    private final SocketChannel channel;
    private final BufferedReader in;
    private final OutputStream out;
    private final Map<String, Object> greeting;
    private final List<Map<String, Object>> events = new ArrayList<>();

    private QmpClient(SocketChannel channel) throws IOException {
        this.channel = channel;
        this.in = new BufferedReader(new InputStreamReader(Channels.newInputStream(channel), StandardCharsets.UTF_8));
        this.out = Channels.newOutputStream(channel);
        this.greeting = readObject();
        if (greeting == null || !greeting.containsKey("QMP")) {
            throw new IOException("no QMP greeting: " + greeting);
        }
    }

    /** Connects and reads the greeting. */
    public static QmpClient connect(Path socket) throws IOException {
        SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            c.connect(UnixDomainSocketAddress.of(socket));
            return new QmpClient(c);
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** Connects and negotiates capabilities. */
    public static QmpClient negotiated(Path socket) throws IOException {
        QmpClient c = connect(socket);
        Map<String, Object> r = c.command("{\"execute\":\"qmp_capabilities\"}");
        if (!r.containsKey("return")) {
            c.close();
            throw new IOException("qmp_capabilities failed: " + r);
        }
        return c;
    }

    public Map<String, Object> greeting() {
        return greeting;
    }

    /** Sends raw text (a command object, or anything a hostile client would). */
    public void send(String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** Sends {@code json} and returns its response; events read before it are kept ({@link #events}). */
    public Map<String, Object> command(String json) throws IOException {
        send(json + "\n");
        return response();
    }

    /** The next response (an object with "return" or "error"), keeping the events before it. */
    public Map<String, Object> response() throws IOException {
        while (true) {
            Map<String, Object> m = readObject();
            if (m == null) {
                throw new IOException("the monitor closed the connection");
            }
            if (m.containsKey("event")) {
                events.add(m);
            } else {
                return m;
            }
        }
    }

    /** The event named {@code name}: one kept already, or the next one read (blocking). */
    public Map<String, Object> event(String name) throws IOException {
        while (true) {
            for (Map<String, Object> e : events) {
                if (name.equals(e.get("event"))) {
                    events.remove(e);
                    return e;
                }
            }
            Map<String, Object> m = readObject();
            if (m == null) {
                throw new IOException("the monitor closed the connection before event " + name);
            }
            if (!m.containsKey("event")) {
                throw new IOException("a response came where event " + name + " was expected: " + m);
            }
            events.add(m);
        }
    }

    /** The events kept so far (read before responses). */
    public List<Map<String, Object>> events() {
        return events;
    }

    /** Reads the next line, or null at the end of the stream. */
    public String readLine() throws IOException {
        return in.readLine();
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> readObject() throws IOException {
        String line;
        do {
            line = in.readLine();
            if (line == null) {
                return null;
            }
        } while (line.isBlank());
        return (Map<String, Object>) Json.parse(line);
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
