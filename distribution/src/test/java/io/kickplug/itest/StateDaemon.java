package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.launcher.ControlClient;
import io.kickplug.virtio.testkit.Await;
import java.io.File;
import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code kickplug.jar --daemon --control SOCK --state WORK/state}, started and stopped again as a test needs, driven
 * over its control socket only; each start's stderr is kept in {@code WORK/daemonN.err} for failure messages.
 */
final class StateDaemon implements AutoCloseable {

    private static final Path JAR = Path.of(System.getProperty("kickplug.jar", "target/kickplug.jar")).toAbsolutePath();
    private static final long START_SECONDS = 120;

    private final Path work;
    private Process daemon;
    private int starts;

    StateDaemon(Path work) {
        this.work = work;
    }

    /** Asks {@code statement}; fails unless it succeeded; returns the answer. */
    static String ok(ControlClient c, String statement) throws IOException {
        String answer = c.ask(statement);
        if (answer == null || !answer.startsWith("{\"ok\":true")) {
            throw new AssertionError(statement + ": " + answer);
        }
        return answer;
    }

    /** Starts the daemon and waits for its control socket. */
    void start(Path control) throws IOException {
        int n = starts++;
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (Runtime.version().feature() >= 23) {
            command.add("--sun-misc-unsafe-memory-access=allow"); // build-facts, Java 25
        }
        command.add("-Djava.io.tmpdir=" + work);
        command.addAll(List.of("-jar", JAR.toString(), "--daemon", "--control", control.toString(), "--state",
                work.resolve("state").toString(), "--log-level", "info"));
        daemon = new ProcessBuilder(command).directory(work.toFile())
                .redirectInput(Redirect.from(new File("/dev/null")))
                .redirectOutput(work.resolve("daemon" + n + ".out").toFile())
                .redirectError(work.resolve("daemon" + n + ".err").toFile()).start();
        Process started = daemon;
        Await.await(() -> Files.exists(control) || !started.isAlive(), Duration.ofSeconds(START_SECONDS),
                "the daemon's control socket " + control);
        assertTrue(daemon.isAlive(), this::log);
    }

    /** SIGTERM, as systemd stops it: exports stopped, disks quiesced, configurations kept in the state folder. */
    void stopGracefully() throws InterruptedException {
        daemon.destroy();
        assertTrue(daemon.waitFor(60, TimeUnit.SECONDS), "the daemon stops on SIGTERM");
        assertEquals(0, daemon.exitValue(), this::log);
    }

    /** Every start's stderr so far. */
    String log() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < starts; i++) {
            try {
                sb.append("--- daemon ").append(i).append('\n')
                        .append(Files.readString(work.resolve("daemon" + i + ".err")));
            } catch (IOException e) {
                sb.append(e).append('\n');
            }
        }
        return sb.toString();
    }

    /** A test's end: stops {@code daemon} (when one was made) and deletes {@code work} (when one was made). */
    static void stopAndDelete(StateDaemon daemon, Path work) throws Exception {
        try {
            if (daemon != null) {
                daemon.close();
            }
        } finally {
            if (work != null) {
                RealGuestHarness.deleteTree(work);
            }
        }
    }

    /** Stops a daemon still running: SIGTERM, then SIGKILL. */
    @Override
    public void close() throws InterruptedException {
        try {
            if (daemon != null && daemon.isAlive()) {
                daemon.destroy();
                daemon.waitFor(60, TimeUnit.SECONDS);
            }
        } finally {
            if (daemon != null) {
                daemon.destroyForcibly();
            }
        }
    }
}
