package io.kickplug.launcher;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/** One connection to a daemon's control socket, for tests: a statement a line out, one JSON line back. */
public final class ControlClient implements AutoCloseable {
    final SocketChannel channel;
    final OutputStream out;
    /** The answers, a line each (read directly when a test sends raw bytes). */
    public final BufferedReader in;

    public ControlClient(Path socket) throws IOException {
        channel = SocketChannel.open(UnixDomainSocketAddress.of(socket));
        out = Channels.newOutputStream(channel);
        in = new BufferedReader(new InputStreamReader(Channels.newInputStream(channel), StandardCharsets.UTF_8));
    }

    /** Sends {@code line} as it is, then a newline. */
    public void send(byte[] line) throws IOException {
        out.write(line);
        out.write('\n');
        out.flush();
    }

    /** Sends one statement; returns the answer line (null when the server closed the connection). */
    public String ask(String statement) throws IOException {
        send(statement.getBytes(StandardCharsets.UTF_8));
        return in.readLine();
    }

    /** {@link #ask} for a lambda: "" when the server closed, an assertion error on an I/O error. */
    public String tryAsk(String statement) {
        try {
            String a = ask(statement);
            return a == null ? "" : a;
        } catch (IOException e) {
            throw new AssertionError("control socket: " + e, e);
        }
    }

    /**
     * Connects {@code n} clients to {@code socket}, all at the same time (each waits until every one is
     * connected), then client {@code i} asks {@code statement.apply(i)}. Returns the answers in client order,
     * waiting at most {@code timeoutSeconds} for each.
     */
    public static List<String> askAtOnce(Path socket, int n, IntFunction<String> statement, long timeoutSeconds)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        CountDownLatch connected = new CountDownLatch(n);
        try {
            List<Future<String>> answers = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int id = i;
                answers.add(pool.submit(() -> {
                    try (ControlClient c = new ControlClient(socket)) {
                        connected.countDown();
                        connected.await();
                        return c.ask(statement.apply(id));
                    }
                }));
            }
            List<String> result = new ArrayList<>(n);
            for (Future<String> a : answers) {
                result.add(a.get(timeoutSeconds, TimeUnit.SECONDS));
            }
            return result;
        } finally {
            pool.shutdownNow();
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
