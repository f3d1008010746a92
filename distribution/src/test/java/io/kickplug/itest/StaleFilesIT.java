package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Startup hygiene of the built {@code kickplug.jar}: what a daemon killed with SIGKILL leaves in the temporary
 * directory (its Felix cache folder, junixsocket's extracted library inside it, its vhost-user socket) does not
 * survive the next daemon's start, while the folder of a daemon that still runs is left alone.
 */
class StaleFilesIT {

    private static final long TIMEOUT_SECONDS = 90;
    private static Path jar;

    @TempDir
    Path tmpDir;

    @TempDir
    Path workDir;

    @BeforeAll
    static void findJar() {
        jar = LauncherJar.built();
    }

    /** A daemon that printed its "running" line. */
    private record Daemon(Process process, List<String> out, Path err) {
        void kill() throws InterruptedException {
            process.destroyForcibly(); // SIGKILL
            assertTrue(process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS));
        }

        void terminate() throws InterruptedException {
            assertTrue(process.toHandle().destroy(), "could not send SIGTERM");
            assertTrue(process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), "daemon did not stop after SIGTERM");
        }
    }

    private Daemon startDaemon(String name, String... statements) throws Exception {
        Path script = Files.writeString(workDir.resolve(name + ".gosh"), String.join("\n", statements) + "\n");
        Path err = workDir.resolve(name + ".err");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Djava.io.tmpdir=" + tmpDir);
        command.add("-jar");
        command.add(jar.toString());
        command.add("--daemon");
        // The temporary cache folder is what this test is about, not the default persistent bundle cache.
        command.add("--state");
        command.add("none");
        command.add("-f");
        command.add(script.toString());
        Process process = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectInput(Redirect.from(new File("/dev/null"))).redirectError(err.toFile()).start();
        DaemonStdout stdout = new DaemonStdout(process, "daemon " + name);
        List<String> out = stdout.lines;
        try {
            stdout.running.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            process.destroyForcibly();
            throw new AssertionError("daemon " + name + " did not start: " + out + " stderr "
                    + Files.readAllLines(err), e);
        }
        return new Daemon(process, out, err);
    }

    private List<Path> cacheFolders() throws IOException {
        try (Stream<Path> s = Files.list(tmpDir)) {
            return s.filter(p -> p.getFileName().toString().startsWith("kickplug-felix-")).sorted().toList();
        }
    }

    private Path onlyNew(List<Path> before) throws IOException {
        List<Path> now = new ArrayList<>(cacheFolders());
        now.removeAll(before);
        assertEquals(1, now.size(), "one new cache folder: " + now);
        return now.get(0);
    }

    @Test
    void aKilledDaemonsFilesDoNotSurviveTheNextStartButALiveDaemonsDo() throws Exception {
        Path socket = tmpDir.resolve("x.sock");
        String[] serve = {"kp:attach --backend null x 1M", "kp:vhost x --socket " + socket + " --queues 1"};

        Daemon killed = startDaemon("killed", serve);
        Path killedCache = onlyNew(List.of());
        assertTrue(Files.exists(socket, LinkOption.NOFOLLOW_LINKS), "the export's socket exists");
        killed.kill();
        assertTrue(Files.isDirectory(killedCache), "SIGKILL left the cache folder behind (nothing could delete it)");
        assertTrue(Files.exists(socket, LinkOption.NOFOLLOW_LINKS), "and the socket");

        // The next daemon removes the dead one's folder and replaces its stale socket with its own.
        Daemon first = startDaemon("first", serve);
        assertFalse(Files.exists(killedCache), "the killed daemon's cache folder was removed: " + cacheFolders());
        Path firstCache = onlyNew(List.of());
        try {
            // A daemon starting while another runs leaves the live one's folder alone.
            Daemon second = startDaemon("second", "kp:disks");
            try {
                assertTrue(Files.isDirectory(firstCache), "a live daemon's folder stays: " + cacheFolders());
                assertEquals(2, cacheFolders().size(), cacheFolders().toString());
            } finally {
                second.terminate();
            }
        } finally {
            first.terminate();
        }
        assertEquals(List.of(), cacheFolders(), "stopped daemons delete their own folders");
        try (Stream<Path> left = Files.walk(tmpDir)) {
            assertEquals(List.of(tmpDir), left.toList(), "nothing else is left in the temporary directory");
        }
    }
}
