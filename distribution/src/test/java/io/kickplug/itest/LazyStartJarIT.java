package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import io.kickplug.virtio.testkit.Await;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A daemon starts some bundles only after it is ready (LazyStart: the simulated guest, the batching strategies,
 * the poll policy, the console bundles), unless its statements need them. They need them not only when they use
 * those bundles' own commands but also when a command of another bundle references a service they provide:
 * kp:io (the shell bundle's) runs on the guest bundle's GuestWorkloads. Driven as the report drove it: the
 * launcher as a child process, {@code --daemon -c STATEMENTS}, which once failed with "error: no simulated guest:
 * the io.kickplug.guest bundle is not active" and exit status 1.
 */
class LazyStartJarIT {

    private static final long TIMEOUT_SECONDS = 120;
    private static Path jar;

    @TempDir
    Path tmp;

    private int runs;

    @BeforeAll
    static void findJar() {
        jar = LauncherJar.built();
    }

    /** What a daemon printed until SIGTERM stopped it. */
    private record Run(int exit, List<String> out, String err) {
        String outText() {
            return String.join("\n", out);
        }

        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout\n" + outText() + "\n--- stderr\n" + err;
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "kp:attach d0 64M; kp:io d0 | mismatches  0",
        "kp:guest --vcpus 2 | vcpus              2",
        "kp:attach d0 4M; kp:poll d0 on | d0: polling on (active), poll-max-ns 32768",
        "kp:attach d0 4M; kp:notify d0 bh | d0 queue 0: bh",
        "kp:strategies | defer-call  yes"})
    void aDaemonsStatementsFindTheServicesOfTheBundlesItStartsAfterReady(String statements, String expected)
            throws Exception {
        Run run = daemon(tmp.resolve("state"), "--log-level", "debug", "-c", statements);
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.outText().contains(expected), run::toString);
        assertFalse(run.err().contains("error:"), run::toString);
    }

    /**
     * The same from a reused bundle cache, where the launcher takes what the jars say from the facts kept with
     * the cache, and from a cache whose facts an older launcher wrote (format 1, without the references): those
     * must not be read as "kp:io references nothing".
     */
    @Test
    void fromAReusedCacheAndFromOneWithFactsOfTheFormerFormat() throws Exception {
        Path state = tmp.resolve("state");
        String statements = "kp:attach d0 4M; kp:io --size 1M d0";
        Run made = daemon(state, "--log-level", "debug", "-c", statements);
        assertEquals(0, made.exit(), made::toString);
        assertTrue(made.err().contains("(bundle cache made)"), made::toString);

        Run reused = daemon(state, "--log-level", "debug", "-c", statements);
        assertEquals(0, reused.exit(), reused::toString);
        assertTrue(reused.err().contains("bundle set read (from the cache)"), reused::toString);
        assertTrue(reused.outText().contains("mismatches  0"), reused::toString);

        // What a launcher before the fix kept: the same bundle lines, command lines without references.
        Path facts = state.resolve("bundles.txt");
        List<String> former = new ArrayList<>(List.of("# kickplug bundle facts 1"));
        for (String line : Files.readAllLines(facts, StandardCharsets.UTF_8)) {
            if (line.startsWith("B\t") || line.startsWith("N\t")) {
                former.add(line);
            } else if (line.startsWith("C\t")) {
                former.add(line.substring(0, line.lastIndexOf('\t')));
            }
        }
        Files.write(facts, former, StandardCharsets.UTF_8);
        Run stale = daemon(state, "--log-level", "debug", "-c", statements);
        assertEquals(0, stale.exit(), stale::toString);
        assertTrue(stale.outText().contains("mismatches  0"), stale::toString);
        assertTrue(stale.err().contains("(bundle cache reused)"), "the cache itself is still good: " + stale);
        assertFalse(stale.err().contains("bundle set read (from the cache)"), "the old facts are not read: " + stale);
        assertTrue(Files.readString(facts).startsWith("# kickplug bundle facts 2\n"), "kept again, in the new format");
    }

    /**
     * A client that connects the moment the control socket appears (ready), while the bundles the daemon starts
     * after ready may still be starting: its session waits for them, so the commands that need their services
     * find them bound instead of failing with "not active".
     */
    @Test
    void aClientThatConnectsRightAfterReadyFindsTheLaterBundlesServices() throws Exception {
        Path control = tmp.resolve("ctl.sock");
        Path out = tmp.resolve("daemon.out");
        Path err = tmp.resolve("daemon.err");
        Process daemon = start(Redirect.to(out.toFile()), Redirect.to(err.toFile()), "--daemon", "--state",
                tmp.resolve("state").toString(), "--control", control.toString(), "-c", "kp:attach d0 4M");
        try {
            Await.await(() -> Files.exists(control) || !daemon.isAlive(), Duration.ofSeconds(TIMEOUT_SECONDS),
                    () -> "the control socket " + control);
            assertTrue(daemon.isAlive(), () -> "the daemon ended before it was ready: " + read(out) + read(err));
            Path clientOut = tmp.resolve("client.out");
            Path clientErr = tmp.resolve("client.err");
            Process client = start(Redirect.to(clientOut.toFile()), Redirect.to(clientErr.toFile()),
                    "--connect", control.toString(), "-c",
                    "kp:io --size 64K d0; kp:guest --vcpus 2; kp:strategies; kp:poll d0 on");
            assertTrue(client.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), "the client did not finish");
            String answer = read(clientOut);
            assertEquals(0, client.exitValue(), () -> answer + read(clientErr));
            assertTrue(answer.contains("mismatches  0"), answer);
            assertTrue(answer.contains("vcpus              2"), answer);
            assertTrue(answer.contains("bh          yes"), answer);
            assertTrue(answer.contains("d0: polling on (active)"), answer);
        } finally {
            daemon.toHandle().destroy();
            if (!daemon.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                daemon.destroyForcibly();
            }
        }
        assertEquals(0, daemon.exitValue(), () -> read(out) + read(err));
    }

    /**
     * A daemon with a control socket starts the console bundles (gogo.shell, gogo.command) only when a statement of
     * a client uses one of their functions: idle, it has no "Gogo shell" thread (gogo.shell's start job, which stays
     * for the process's life once started) and kp: statements do not start them; {@code echo} and {@code lb} then
     * work as before. Before, they started right after ready with the other later bundles.
     */
    @Test
    void theConsoleBundlesStartOnlyWhenAControlStatementUsesThem() throws Exception {
        Path control = tmp.resolve("ctl.sock");
        Path out = tmp.resolve("daemon.out");
        Path err = tmp.resolve("daemon.err");
        Process daemon = start(Redirect.to(out.toFile()), Redirect.to(err.toFile()), "--daemon", "--state",
                tmp.resolve("state").toString(), "--control", control.toString(), "-c", "kp:attach d0 4M");
        try {
            Await.await(() -> Files.exists(control) || !daemon.isAlive(), Duration.ofSeconds(TIMEOUT_SECONDS),
                    () -> "the control socket " + control);
            assertTrue(daemon.isAlive(), () -> "the daemon ended before it was ready: " + read(out) + read(err));
            // A session opens once the later bundles have started: after this, all a daemon starts by itself is up.
            String listedDisks = client(control, "kp:disks --json; kp:strategies");
            assertTrue(listedDisks.contains("d0") && listedDisks.contains("defer-call"), listedDisks);
            assertFalse(threadNames(daemon.pid()).contains("Gogo shell"), () -> "idle: " + threadNames(daemon.pid()));

            String echoed = client(control, "echo on-demand");
            assertTrue(echoed.contains("on-demand"), echoed);
            Await.await(() -> threadNames(daemon.pid()).contains("Gogo shell"), Duration.ofSeconds(TIMEOUT_SECONDS),
                    () -> "gogo.shell started for echo: " + threadNames(daemon.pid()));
            String listed = client(control, "lb");
            assertTrue(listed.contains("org.apache.felix.gogo.command") || listed.contains("Apache Felix Gogo Command"),
                    listed);
            assertTrue(listed.contains("Active"), listed);
        } finally {
            daemon.toHandle().destroy();
            if (!daemon.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                daemon.destroyForcibly();
            }
        }
        assertEquals(0, daemon.exitValue(), () -> read(out) + read(err));
        assertFalse(read(err).contains("gosh"), () -> read(err));
    }

    /** Runs {@code statements} through the control socket with a {@code --connect} client; its stdout. */
    private String client(Path control, String statements) throws Exception {
        int n = runs++;
        Path clientOut = tmp.resolve("client" + n + ".out");
        Path clientErr = tmp.resolve("client" + n + ".err");
        Process client = start(Redirect.to(clientOut.toFile()), Redirect.to(clientErr.toFile()),
                "--connect", control.toString(), "-c", statements);
        assertTrue(client.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), "the client did not finish");
        String answer = read(clientOut);
        assertEquals(0, client.exitValue(), () -> answer + read(clientErr));
        return answer;
    }

    /** The names of a process's threads (Linux: /proc/PID/task/TID/comm, at most 15 characters). */
    private static List<String> threadNames(long pid) {
        List<String> names = new ArrayList<>();
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    names.add(Files.readString(t.resolve("comm")).strip());
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            throw new AssertionError("cannot list the threads of " + pid, e);
        }
        return names;
    }

    /**
     * Runs a daemon with {@code args} until it says it is running, then stops it with SIGTERM; a daemon whose
     * statements fail ends by itself first, with their error.
     */
    private Run daemon(Path state, String... args) throws Exception {
        int n = runs++;
        Path err = tmp.resolve("run" + n + ".err");
        List<String> all = new ArrayList<>(List.of("--daemon", "--state", state.toString()));
        all.addAll(List.of(args));
        Process process = start(Redirect.PIPE, Redirect.to(err.toFile()), all.toArray(String[]::new));
        DaemonStdout stdout = new DaemonStdout(process, "daemon");
        try {
            try {
                stdout.running.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                // SIGTERM through the handle: Process.destroy() would also close our end of its stdout.
                assertTrue(process.toHandle().destroy(), "could not send SIGTERM");
            } catch (ExecutionException endedFirst) {
                // its statements failed: the exit status and stderr say how
            } catch (TimeoutException e) {
                throw new AssertionError("the daemon was not running after " + TIMEOUT_SECONDS + " s: "
                        + stdout.lines + "\n" + read(err), e);
            }
            assertTrue(process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), "the daemon did not stop");
            stdout.reader.join(TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
            return new Run(process.exitValue(), List.copyOf(stdout.lines), read(err));
        } finally {
            process.destroyForcibly();
        }
    }

    private Process start(Redirect out, Redirect err, String... args) throws IOException {
        List<String> command = LauncherJar.command(jar, tmp);
        command.addAll(List.of(args));
        return new ProcessBuilder(command).directory(tmp.toFile())
                .redirectInput(Redirect.from(new File("/dev/null")))
                .redirectOutput(out).redirectError(err).start();
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }
}
