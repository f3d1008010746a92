package io.kickplug.vhost.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A small QMP client for tests (QEMU's docs/interop/qmp-spec.rst): one JSON object per line; the greeting, then
 * {@code qmp_capabilities}, then commands, each answered by a line with {@code "return"} or {@code "error"};
 * asynchronous events in between are kept ({@link #events}). Values are picked out of the answer's text with
 * {@link #field}: enough for {@code migrate}, {@code query-migrate}, {@code query-status} and {@code quit}.
 */
public final class Qmp implements AutoCloseable {

    private final SocketChannel channel;
    private final BufferedReader in;
    private final List<String> events = new ArrayList<>();

    private Qmp(SocketChannel channel) throws IOException {
        this.channel = channel;
        this.in = new BufferedReader(new InputStreamReader(Channels.newInputStream(channel), StandardCharsets.UTF_8));
        String greeting = in.readLine();
        if (greeting == null || !greeting.contains("\"QMP\"")) {
            throw new IOException("no QMP greeting: " + greeting);
        }
        execute("qmp_capabilities", null);
    }

    /** Connects to QMP on {@code socket} (QEMU's {@code -qmp unix:PATH,server=on,wait=off}). */
    public static Qmp connect(Path socket) throws IOException {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            ch.connect(UnixDomainSocketAddress.of(socket));
            return new Qmp(ch);
        } catch (IOException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * Runs {@code command} with {@code arguments} (a JSON object's text, or {@code null}) and returns the answer's
     * line; an {@code "error"} answer throws with QEMU's message.
     */
    public synchronized String execute(String command, String arguments) throws IOException {
        String line = "{\"execute\": \"" + command + "\"" + (arguments == null ? "" : ", \"arguments\": " + arguments)
                + "}\n";
        ByteBuffer b = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
        while (b.hasRemaining()) {
            channel.write(b);
        }
        while (true) {
            String answer = in.readLine();
            if (answer == null) {
                throw new IOException("QMP closed while waiting for the answer to " + command);
            }
            if (answer.contains("\"event\"")) {
                events.add(answer);
                continue;
            }
            if (answer.contains("\"error\"")) {
                throw new IOException(command + " failed: " + answer);
            }
            return answer;
        }
    }

    /** The first string or number value of {@code key} in {@code json}, or {@code null}. */
    public static String field(String json, String key) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\": *(\"([^\"]*)\"|(-?[0-9]+))").matcher(json);
        if (!m.find()) {
            return null;
        }
        return m.group(2) != null ? m.group(2) : m.group(3);
    }

    /** Events seen so far. */
    public synchronized List<String> events() {
        return List.copyOf(events);
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
