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
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import io.kickplug.virtio.testkit.Await;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The persistent bundle cache ({@code --state DIR}) of a copy of the built distribution: the second start reuses
 * it (Felix's bundles and SCR's component metadata), and a bundle jar that changes makes it again, so that the
 * changed jar's component descriptions are the ones that run. The disks' configurations are kept there too.
 */
class StateCacheIT {

    private static final long TIMEOUT_SECONDS = 90;
    private static final String SHELL_JAR = "kickplug-shell-0.1.0-SNAPSHOT.jar";
    private static final String KP_COMMANDS_XML = "OSGI-INF/io.kickplug.shell.KpCommands.xml";

    @TempDir
    Path tmp;

    private Path jar;
    private Path state;
    private int runs;

    /** A copy of kickplug.jar and felix/ (without the class-data archive, which names the original's path). */
    @BeforeEach
    void copyDistribution() throws IOException {
        Path built = Path.of(System.getProperty("kickplug.jar", "target/kickplug.jar")).toAbsolutePath();
        Path dist = Files.createDirectories(tmp.resolve("dist"));
        jar = dist.resolve("kickplug.jar");
        Files.copy(built, jar);
        Path felix = built.resolveSibling("felix");
        try (Stream<Path> files = Files.walk(felix)) {
            for (Path p : files.toList()) {
                Path to = dist.resolve("felix").resolve(felix.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(to);
                } else if (!p.getFileName().toString().endsWith(".jsa")) {
                    Files.copy(p, to, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
        assertTrue(Files.isRegularFile(dist.resolve("felix").resolve("bundle").resolve(SHELL_JAR)),
                "no " + SHELL_JAR + " in the distribution");
        state = tmp.resolve("state");
    }

    @Test
    void theSecondStartReusesTheCacheAndTheThirdStillWorks() throws Exception {
        Run first = run("kp:attach --backend null d0 1M; kp:disks");
        assertEquals(0, first.exit, first::toString);
        assertTrue(first.err.contains("(bundle cache made)"), first::toString);
        assertTrue(first.out.contains("d0"), first::toString);
        try (Stream<Path> files = Files.walk(state)) {
            assertTrue(files.anyMatch(p -> p.getFileName().toString().equals("componentMetadataStore")),
                    "SCR kept its component metadata in the cache");
        }
        for (int i = 0; i < 2; i++) {
            Run again = run("kp:disks");
            assertEquals(0, again.exit, again::toString);
            assertTrue(again.err.contains("(bundle cache reused)"), again::toString);
            // The disk of the first run is attached again: --state DIR keeps the configurations.
            assertTrue(again.out.contains("d0"), again::toString);
        }
        Run detach = run("kp:detach d0; kp:disks");
        assertEquals(0, detach.exit, detach::toString);
        assertFalse(run("kp:disks").out.contains("d0"), "a detached disk does not come back");
    }

    @Test
    void aChangedBundleJarMakesTheCacheAgainAndItsNewComponentDescriptionsRun() throws Exception {
        Run before = run("kp:disks");
        assertEquals(0, before.exit, before::toString);
        assertEquals(0, run("kp:disks").exit, "reused");
        // The shell bundle rebuilt without kp:disks (its component description no longer names the function),
        // with the old jar's modification time, as an unpacked archive of a newer distribution may leave it.
        Path shell = jar.resolveSibling("felix").resolve("bundle").resolve(SHELL_JAR);
        FileTime time = Files.getLastModifiedTime(shell);
        Path rebuilt = tmp.resolve("rebuilt.jar");
        rewrite(shell, rebuilt, KP_COMMANDS_XML, xml -> {
            String without = xml.replace("disks\n", "");
            assertFalse(without.equals(xml), "kp:disks is in " + KP_COMMANDS_XML);
            return without;
        });
        Files.setLastModifiedTime(rebuilt, time);
        Files.move(rebuilt, shell, StandardCopyOption.REPLACE_EXISTING);
        Run after = run("kp:disks");
        assertTrue(after.err.contains("(bundle cache made)"), after::toString);
        assertEquals(1, after.exit, () -> "the old component description ran:\n" + after);
        assertTrue(after.err.contains("Command not found"), after::toString);
        Run still = run("kp:attach --backend null d1 1M");
        assertEquals(0, still.exit, still::toString);
        assertTrue(still.err.contains("(bundle cache reused)"), still::toString);
    }

    @Test
    void aSecondDaemonOfTheSameDistributionFallsBackToATemporaryCache() throws Exception {
        Path xdg = tmp.resolve("xdg");
        Process first = daemon(xdg, "first");
        Process second = null;
        try {
            awaitSocket(first, tmp.resolve("first.sock"));
            second = daemon(xdg, "second");
            awaitSocket(second, tmp.resolve("second.sock"));
            String firstErr = Files.readString(tmp.resolve("first.err"));
            String secondErr = Files.readString(tmp.resolve("second.err"));
            assertTrue(firstErr.contains("(bundle cache made)"), firstErr);
            assertTrue(secondErr.contains("is in use by another process: a temporary one instead"), secondErr);
            assertFalse(secondErr.contains("(bundle cache"), secondErr);
            Path defaultState;
            try (Stream<Path> dirs = Files.list(xdg.resolve("kickplug"))) {
                defaultState = dirs.filter(d -> d.getFileName().toString().startsWith("felix-")).findFirst()
                        .orElseThrow(() -> new AssertionError("no default state folder in " + xdg));
            }
            // Named explicitly, a state folder in use is an error.
            state = defaultState;
            Run busy = run("kp:disks");
            assertEquals(1, busy.exit, busy::toString);
            assertTrue(busy.err.contains("error: the state directory " + defaultState
                    + " is in use by another process"), busy::toString);
            for (Process p : List.of(first, second)) {
                assertTrue(p.toHandle().destroy(), "SIGTERM");
                assertTrue(p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), "daemon did not stop");
                assertEquals(0, p.exitValue());
            }
        } finally {
            first.destroyForcibly();
            if (second != null) {
                second.destroyForcibly();
            }
        }
        // Once the first is gone, its cache serves the next daemon.
        Process third = daemon(xdg, "third");
        try {
            awaitSocket(third, tmp.resolve("third.sock"));
            String thirdErr = Files.readString(tmp.resolve("third.err"));
            assertTrue(thirdErr.contains("(bundle cache reused)"), thirdErr);
        } finally {
            third.toHandle().destroy();
            third.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            third.destroyForcibly();
        }
    }

    /** A daemon with the default state folder under {@code xdg}, control socket {@code tmp/NAME.sock}. */
    private Process daemon(Path xdg, String name) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (Runtime.version().feature() >= 23) {
            command.add("--sun-misc-unsafe-memory-access=allow"); // build-facts, Java 25
        }
        command.add("-Djava.io.tmpdir=" + tmp);
        command.addAll(List.of("-jar", jar.toString(), "--daemon", "--log-level", "debug", "--control",
                tmp.resolve(name + ".sock").toString()));
        ProcessBuilder pb = new ProcessBuilder(command).directory(tmp.toFile())
                .redirectInput(Redirect.from(new File("/dev/null")))
                .redirectOutput(tmp.resolve(name + ".out").toFile()).redirectError(tmp.resolve(name + ".err").toFile());
        pb.environment().put("XDG_STATE_HOME", xdg.toString());
        return pb.start();
    }

    /** Waits until the daemon's control socket is there (it is opened once the daemon is ready). */
    private static void awaitSocket(Process daemon, Path socket) {
        Await.await(() -> Files.exists(socket) || !daemon.isAlive(), Duration.ofSeconds(TIMEOUT_SECONDS),
                "control socket " + socket);
        assertTrue(daemon.isAlive(), "the daemon ended before it was ready");
    }

    /** Copies a jar, changing one entry's text. */
    private static void rewrite(Path from, Path to, String entry, java.util.function.UnaryOperator<String> change)
            throws IOException {
        try (ZipInputStream in = new ZipInputStream(Files.newInputStream(from));
                ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(to))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null;) {
                byte[] bytes = in.readAllBytes();
                if (e.getName().equals(entry)) {
                    bytes = change.apply(new String(bytes, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
                }
                ZipEntry copy = new ZipEntry(e.getName());
                copy.setTime(e.getTime());
                out.putNextEntry(copy);
                out.write(bytes);
                out.closeEntry();
            }
        }
    }

    private record Run(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout\n" + out + "\n--- stderr\n" + err;
        }
    }

    private Run run(String statements) throws Exception {
        int n = runs++;
        Path out = tmp.resolve("run" + n + ".out");
        Path err = tmp.resolve("run" + n + ".err");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (Runtime.version().feature() >= 23) {
            command.add("--sun-misc-unsafe-memory-access=allow"); // build-facts, Java 25
        }
        command.add("-Djava.io.tmpdir=" + tmp);
        command.addAll(List.of("-jar", jar.toString(), "--state", state.toString(), "--log-level", "debug",
                "-c", statements));
        Process p = new ProcessBuilder(command).directory(tmp.toFile())
                .redirectInput(Redirect.from(new File("/dev/null")))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            assertTrue(p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), "kickplug.jar did not finish: " + statements);
            return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            p.destroyForcibly();
        }
    }
}
