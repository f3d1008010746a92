package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.File;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the built {@code kickplug.jar} as a child process, as a user would, and checks exit statuses and
 * what it prints.
 */
class KickplugJarIT {

    private static final long TIMEOUT_SECONDS = 90;
    private static Path jar;

    private int runs;

    @TempDir
    Path workDir;

    @TempDir
    Path tmpDir;

    @BeforeAll
    static void findJar() {
        jar = LauncherJar.built();
    }

    /** What a finished run printed. */
    record Run(int exit, List<String> out, List<String> err) {
        String outText() {
            return String.join("\n", out);
        }

        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout\n" + outText() + "\n--- stderr\n" + String.join("\n", err);
        }
    }

    @Test
    void attachIoDisksDetachExitsZeroAndSaysWhatItDid() throws Exception {
        Run run = run("-c", "kp:attach d0 64M; kp:io d0; kp:disks; kp:detach d0");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.err().isEmpty(), run::toString);
        assertTrue(run.outText().contains("d0"), run::toString);
    }

    @Test
    void badSizeFailsWithOneErrorLine() throws Exception {
        assertOneErrorLine(run("-c", "kp:attach d1 abc"));
    }

    @Test
    void detachingAnUnknownDiskFailsWithOneErrorLine() throws Exception {
        assertOneErrorLine(run("-c", "kp:detach nosuch"));
    }

    @Test
    void unknownCommandFailsWithOneErrorLine() throws Exception {
        Run run = run("-c", "kp:nosuchcommand");
        assertOneErrorLine(run);
        assertEquals("error: Command not found: kp:nosuchcommand", run.err().get(0));
    }

    @Test
    void firstFailingStatementStopsTheRun() throws Exception {
        Run run = run("-c", "echo first; nosuch:command; echo never");
        assertOneErrorLine(run);
        assertTrue(run.out().contains("first"), run::toString);
        assertFalse(run.outText().contains("never"), run::toString);
    }

    @Test
    void daemonWhoseScriptFailsExitsOne() throws Exception {
        Path script = Files.writeString(tmpDir.resolve("serve.gosh"), "echo serving\nkp:detach nosuch\n");
        Run run = run("--daemon", "-f", script.toString());
        assertOneErrorLine(run);
        assertTrue(run.out().contains("serving"), run::toString);
    }

    @Test
    void withoutArgumentsTheConsoleReadsStdinAndStopsAtItsEnd() throws Exception {
        Path input = Files.writeString(tmpDir.resolve("console.in"), "echo from-the-console\n");
        Run run = run(Redirect.from(input.toFile()));
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.outText().contains("from-the-console"), run::toString);
    }

    @Test
    void demoExitsZero() throws Exception {
        Run run = run("--demo");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.err().isEmpty(), run::toString);
        assertTrue(run.outText().contains("demo"), run::toString);
    }

    @Test
    void scriptFileRunsLineByLine() throws Exception {
        Path script = Files.writeString(tmpDir.resolve("s.gosh"), String.join("\n",
                "# a comment", "", "echo one; echo two", "echo three \\", "  four",
                "each [a b] {", "  echo item $it", "}", ""));
        Run run = run("-f", script.toString());
        assertEquals(0, run.exit(), run::toString);
        assertEquals(List.of("one", "two", "three four", "item a", "item b"),
                run.out().subList(0, 5), run::toString);
    }

    @Test
    void statementResultsArePrinted() throws Exception {
        // A statement's value, not only what it prints, reaches stdout (the console's INSPECT format).
        Run run = run("-c", "(bundle 0) symbolicName; lb -s io.kickplug");
        assertEquals(0, run.exit(), run::toString);
        assertEquals("org.apache.felix.framework", run.out().get(0), run::toString);
        assertTrue(run.outText().contains("io.kickplug.shell"), run::toString);
    }

    @Test
    void missingScriptFailsWithOneErrorLine() throws Exception {
        Run run = run("-f", tmpDir.resolve("missing.gosh").toString());
        assertOneErrorLine(run);
    }

    @Test
    void badUsageExitsTwo() throws Exception {
        Run run = run("--no-such-option");
        assertEquals(2, run.exit(), run::toString);
        assertEquals(List.of("error: unknown argument '--no-such-option' (try --help)"), run.err());
    }

    @Test
    void helpPrintsUsage() throws Exception {
        Run run = run("--help");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.out().get(0).startsWith("usage: java -jar kickplug.jar"), run::toString);
    }

    @Test
    void leavesNoFelixCacheInTheWorkingDirectoryAndDeletesItsTemporaryOne() throws Exception {
        Run run = run("-c", "lb");
        assertEquals(0, run.exit(), run::toString);
        try (Stream<Path> left = Files.list(workDir)) {
            assertEquals(List.of(), left.toList(), "files left in the working directory");
        }
        try (Stream<Path> left = Files.list(tmpDir)) {
            assertEquals(List.of(), left.filter(p -> p.getFileName().toString().startsWith("kickplug-felix-"))
                    .toList(), "temporary Felix cache not deleted");
        }
    }

    @Test
    void cacheOptionPutsFelixStorageThere() throws Exception {
        Path cache = tmpDir.resolve("cache");
        Run run = run("--cache", cache.toString(), "-c", "lb");
        assertEquals(0, run.exit(), run::toString);
        // DIR/felix: the bundle cache (cleaned at each start); DIR/config: ConfigAdmin's configurations (kept).
        assertTrue(Files.isDirectory(cache.resolve("felix").resolve("bundle0")), "no Felix storage in " + cache);
    }

    @Test
    void daemonRunsUntilSigtermAndStopsCleanly() throws Exception {
        Path errFile = tmpDir.resolve("daemon.err");
        Process process = start(Redirect.from(devNull()), Redirect.PIPE, Redirect.to(errFile.toFile()), "--daemon");
        DaemonStdout stdout = new DaemonStdout(process, "daemon");
        List<String> out = stdout.lines;
        try {
            stdout.running.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            assertTrue(process.isAlive(), "daemon exited on its own");
            // SIGTERM, as Process.destroy() sends, but through the handle: Process.destroy() also closes our end
            // of the child's stdout, which would lose what the daemon prints while it stops.
            assertTrue(process.toHandle().destroy(), "could not send SIGTERM");
            assertTrue(process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), "daemon did not stop after SIGTERM");
            stdout.reader.join(TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
            List<String> err = nonBlankLines(errFile);
            assertEquals(0, process.exitValue(), () -> "stdout " + out + " stderr " + err);
            assertTrue(err.isEmpty(), () -> "stderr " + err);
            assertTrue(out.contains("kickplug: stopped"), () -> "stdout " + out);
        } finally {
            process.destroyForcibly();
        }
        try (Stream<Path> left = Files.list(workDir)) {
            assertEquals(List.of(), left.toList(), "files left in the working directory");
        }
    }

    private static void assertOneErrorLine(Run run) {
        assertEquals(1, run.exit(), run::toString);
        assertEquals(1, run.err().size(), () -> "want exactly one stderr line\n" + run);
        assertTrue(run.err().get(0).startsWith("error: "), run::toString);
        for (String line : concat(run.out(), run.err())) {
            assertFalse(line.contains("Exception"), () -> "exception text in output\n" + run);
            assertFalse(line.contains("\tat "), () -> "stack trace in output\n" + run);
        }
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private Run run(String... args) throws Exception {
        return run(Redirect.from(devNull()), args);
    }

    private Run run(Redirect in, String... args) throws Exception {
        // Output goes to files: no reader threads racing the process's exit.
        int n = runs++;
        Path outFile = tmpDir.resolve("run" + n + ".out");
        Path errFile = tmpDir.resolve("run" + n + ".err");
        Process process = start(in, Redirect.to(outFile.toFile()), Redirect.to(errFile.toFile()), args);
        try {
            assertTrue(process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS),
                    "kickplug.jar " + String.join(" ", args) + " did not finish in " + TIMEOUT_SECONDS + " s");
            return new Run(process.exitValue(), nonBlankLines(outFile), nonBlankLines(errFile));
        } finally {
            process.destroyForcibly();
        }
    }

    /** Starts the jar from a fresh, empty working directory, with its own temporary directory. */
    private Process start(Redirect in, Redirect out, Redirect err, String... args) throws IOException {
        List<String> command = LauncherJar.command(jar, tmpDir);
        command.addAll(List.of(args));
        return new ProcessBuilder(command).directory(workDir.toFile())
                .redirectInput(in)
                .redirectOutput(out)
                .redirectError(err)
                .start();
    }

    private static File devNull() {
        return new File(System.getProperty("os.name").startsWith("Windows") ? "NUL" : "/dev/null");
    }

    private static List<String> nonBlankLines(Path file) throws IOException {
        return Files.readAllLines(file, StandardCharsets.UTF_8).stream().filter(line -> !line.isBlank()).toList();
    }
}
