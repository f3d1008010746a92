package io.kickplug.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code --connect PATH}: sends statements to a running daemon's control socket, one per line, and prints
 * each answer as {@code -c} would locally: the result (a JSON result as it came), or one {@code error:} line
 * on stderr and exit status 1 at the first failure.
 */
final class ControlClient {

    /** Answers can be long (kp:stats --json of many queues); far beyond that is a broken daemon. */
    private static final int MAX_ANSWER_BYTES = 64 << 20;

    private ControlClient() {
    }

    /** Runs the statements; the exit status. */
    static int run(Path socket, int waitSeconds, List<String> statements, PrintStream out, PrintStream err) {
        SocketChannel channel;
        try {
            channel = connect(socket, waitSeconds);
        } catch (IOException e) {
            err.println("error: cannot connect to " + socket + ": " + Errors.message(e));
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("error: interrupted");
            return 1;
        }
        try (channel) {
            OutputStream to = Channels.newOutputStream(channel);
            InputStream from = Channels.newInputStream(channel);
            LineReader answers = new LineReader(from, MAX_ANSWER_BYTES);
            for (String statement : statements) {
                if (statement.indexOf('\n') >= 0 || statement.indexOf('\r') >= 0) {
                    err.println("error: a statement sent to a daemon must be on one line: " + statement.lines()
                            .findFirst().orElse("") + " ...");
                    return 1;
                }
                to.write((statement + "\n").getBytes(StandardCharsets.UTF_8));
                to.flush();
                LineReader.Line line = answers.next();
                if (line == null) {
                    err.println("error: the daemon closed the connection");
                    return 1;
                }
                if (line.tooLong()) {
                    err.println("error: answer longer than " + MAX_ANSWER_BYTES + " bytes");
                    return 1;
                }
                String answer = line.text();
                String ok;
                try {
                    ok = Json.member(answer, "ok");
                } catch (IllegalArgumentException e) {
                    err.println("error: not an answer from a Kickplug daemon: " + abbreviate(answer));
                    return 1;
                }
                if (!"true".equals(ok)) {
                    String message = Json.member(answer, "error");
                    err.println("error: " + (message == null ? abbreviate(answer) : Json.unquote(message)));
                    return 1;
                }
                String result = Json.member(answer, "result");
                if (result != null && !result.equals("null")) {
                    out.println(result.startsWith("\"") ? Json.unquote(result) : result);
                }
            }
            out.flush();
            return 0;
        } catch (IOException e) {
            err.println("error: connection to " + socket + " lost: " + Errors.message(e));
            return 1;
        }
    }

    private static SocketChannel connect(Path socket, int waitSeconds) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(waitSeconds);
        while (true) {
            SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                channel.connect(UnixDomainSocketAddress.of(socket));
                return channel;
            } catch (IOException e) {
                // Not there yet (no such file) or nobody accepting yet (refused).
                channel.close();
                if (System.nanoTime() >= deadline) {
                    throw e;
                }
                // A readiness check polls; 50 ms keeps it cheap and prompt.
                TimeUnit.MILLISECONDS.sleep(50);
            }
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "...";
    }
}
