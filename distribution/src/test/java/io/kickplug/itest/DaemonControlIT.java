package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import io.kickplug.launcher.ControlClient;
import io.kickplug.virtio.testkit.OutputProcess;
import io.kickplug.virtio.testkit.RealGuestOutput;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The storage daemon as a service runs it: {@code kickplugd --control SOCK --pidfile F} (the launcher script
 * with the daemon's JVM flags), driven only through its control socket. A real Linux guest (the harness of
 * {@code bundles/vhost-user/src/test/realguest}, its prepared initramfs shared with RealGuestIT) runs
 * verified I/O on one export while the other disk is unexported, detached, re-attached and exported again
 * over the socket; then a second guest uses the re-attached export. Hostile control-socket clients are
 * answered with errors or dropped while the daemon keeps serving.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DaemonControlIT {

    private static final Path JAR = Path.of(System.getProperty("kickplug.jar", "target/kickplug.jar")).toAbsolutePath();
    private static final Path REALGUEST = Path.of(System.getProperty("kickplug.realguest.dir",
            "../bundles/vhost-user/src/test/realguest")).toAbsolutePath().normalize();
    private static final Path CACHE = Path.of(System.getProperty("kickplug.realguest.cache",
            "../bundles/vhost-user/target/realguest")).toAbsolutePath().normalize();
    private static final long IMAGE_BYTES = 64L << 20;
    private static final int SUM_MB = 16;
    /** Boot and run under TCG; generous, since CI machines may be as loaded as the development one. */
    private static final long GUEST_SECONDS = 600;

    private static Path work;
    private static Path control;
    private static Path pidfile;
    private static Path daemonErr;
    private static Process daemon;
    /** Every QEMU started, destroyed at the end whatever happened (a failed assertion must not leave one running). */
    private static final List<OutputProcess> GUESTS = Collections.synchronizedList(new ArrayList<>());

    @BeforeAll
    static void startDaemon() throws Exception {
        // Short paths: sun_path holds 107 bytes.
        work = Files.createTempDirectory(Path.of("/tmp"), "kp-dc");
        control = work.resolve("ctl.sock");
        pidfile = work.resolve("kp.pid");
        daemonErr = work.resolve("daemon.err");
        Path script = JAR.resolveSibling("kickplugd");
        assertTrue(Files.isRegularFile(script), "no " + script + " (built by the distribution's package phase)");
        daemon = new ProcessBuilder("sh", script.toString(), "--control", control.toString(), "--pidfile",
                pidfile.toString(), "--log-level", "debug")
                .redirectOutput(work.resolve("daemon.out").toFile()).redirectError(daemonErr.toFile()).start();
        awaitTrue(() -> Files.exists(pidfile) || !daemon.isAlive(), 120, "the daemon is ready (pid file)");
        assertTrue(daemon.isAlive(), DaemonControlIT::daemonLog);
        assertEquals(Long.toString(daemon.pid()), Files.readString(pidfile).strip(),
                "the pid file names the JVM itself: kickplugd execs java");
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(control)));
    }

    @AfterAll
    static void stopDaemon() throws Exception {
        synchronized (GUESTS) {
            for (OutputProcess g : GUESTS) {
                g.process.destroyForcibly();
            }
        }
        try {
            if (daemon != null && daemon.isAlive()) {
                daemon.destroy(); // SIGTERM
                assertTrue(daemon.waitFor(60, TimeUnit.SECONDS), "the daemon stops on SIGTERM");
                assertEquals(0, daemon.exitValue(), DaemonControlIT::daemonLog);
                assertFalse(Files.exists(control), "the control socket is removed at exit");
                assertFalse(Files.exists(pidfile), "the pid file is removed at exit");
            }
        } finally {
            if (daemon != null) {
                daemon.destroyForcibly();
            }
            RealGuestHarness.deleteTree(work);
        }
    }

    @Test
    @Order(1)
    void hostileClientsGetErrorsOrAreDroppedAndTheDaemonKeepsServing() throws Exception {
        try (ControlClient c = new ControlClient(control)) {
            c.send(new byte[] {0, (byte) 0xff, '{', '(', '"', 7, (byte) 0xc3});
            assertError(c.in.readLine());
            byte[] huge = new byte[10 << 20];
            Arrays.fill(huge, (byte) 'k');
            c.send(huge);
            String tooLong = c.in.readLine();
            assertError(tooLong);
            assertTrue(tooLong.contains("line longer than"), tooLong);
            String unknown = c.ask("kp:nosuchcommand");
            assertError(unknown);
            assertTrue(unknown.contains("nosuchcommand"), unknown);
            assertEquals("{\"ok\":true,\"result\":{\"disks\":[]}}", c.ask("kp:disks --json"));
        }
        // A client that leaves in the middle of a statement (kp:io runs for a while on a 64 MiB disk).
        try (ControlClient c = new ControlClient(control)) {
            assertOk(c.ask("kp:attach m 64M"));
            c.send("kp:io --depth 1 m".getBytes(StandardCharsets.UTF_8));
        }
        for (String answer : ControlClient.askAtOnce(control, 100, id -> "kp:disks --json", 120)) {
            assertTrue(answer.startsWith("{\"ok\":true,\"result\":{\"disks\":[{\"name\":\"m\","), answer);
        }
        try (ControlClient c = new ControlClient(control)) {
            // Detach waits for the abandoned kp:io's requests (reset), so the disk goes either way.
            awaitTrue(() -> c.tryAsk("kp:detach m").startsWith("{\"ok\":true"), 120, "m detaches");
            assertEquals("{\"ok\":true,\"result\":{\"disks\":[]}}", c.ask("kp:disks --json"));
        }
        assertTrue(daemon.isAlive(), DaemonControlIT::daemonLog);
        // The command-line client: same output and exit status as -c locally.
        Run ok = connect("-c", "kp:disks --json; kp:disks");
        assertEquals(0, ok.exit, ok::toString);
        assertEquals(List.of("{\"disks\":[]}", "no disks attached"), ok.out, ok::toString);
        Run bad = connect("-c", "kp:disks; kp:detach nosuch; kp:disks");
        assertEquals(1, bad.exit, bad::toString);
        assertEquals(List.of("no disks attached"), bad.out, "stops at the first failure: " + bad);
        assertEquals(1, bad.err.size(), bad::toString);
        assertTrue(bad.err.get(0).startsWith("error: ") && bad.err.get(0).contains("nosuch"), bad::toString);
    }

    @Test
    @Order(2)
    void exportsChangeOverTheSocketWhileARealGuestRunsUndisturbed() throws Exception {
        OutputProcess prepare = startGuest(List.of("bash", REALGUEST.resolve("realguest.sh").toString(), "prepare",
                CACHE.toString()));
        prepare.finish(1200);
        if (prepare.exitCode != 0 || !prepare.has("RG-PREPARED")) {
            fail("the real-guest harness could not prepare; CI runs as root with apt:\n" + prepare.text());
        }
        Path image = work.resolve("a.img");
        try (var f = java.nio.channels.FileChannel.open(image, java.nio.file.StandardOpenOption.CREATE_NEW,
                java.nio.file.StandardOpenOption.WRITE)) {
            f.truncate(IMAGE_BYTES);
            f.write(java.nio.ByteBuffer.wrap(new byte[] {0}), IMAGE_BYTES - 1);
        }
        Path aSock = work.resolve("a.sock");
        Path bSock = work.resolve("b.sock");
        try (ControlClient c = new ControlClient(control)) {
            assertOk(c.ask("kp:attach --queues 2 --backend file --file " + image + " a"));
            assertOk(c.ask("kp:attach b 32M"));
            assertOk(c.ask("kp:vhost a --socket " + aSock + " --queues 2"));
            assertOk(c.ask("kp:vhost b --socket " + bSock));
            String disks = c.ask("kp:disks --json");
            assertTrue(disks.contains("\"name\":\"a\"") && disks.contains("\"name\":\"b\"")
                    && disks.contains("\"address\":\"" + bSock + "\""), disks);

            OutputProcess first = bootGuest(guestCommand(aSock, "guest.fio", 2)).guest();
            assertTrue(first.awaitLine("RG-FIO-BEGIN", GUEST_SECONDS), () -> "fio did not start:\n" + first.text()
                    + "\n--- exports: " + c.tryAsk("kp:vhost-list --json") + "\n--- daemon log:\n" + daemonLog());
            long kicks0 = kicks(c, "a");
            awaitTrue(() -> kicks(c, "a") > kicks0 + 100, 120, "the guest keeps disk a busy");

            // While the guest's I/O runs on a: everything -f can do, on b, over the socket.
            assertOk(c.ask("kp:vhost-stop b"));
            assertOk(c.ask("kp:detach b"));
            assertOk(c.ask("kp:attach b 32M"));
            assertOk(c.ask("kp:resize b 48M"));
            assertOk(c.ask("kp:vhost b --socket " + bSock));
            assertOk(c.ask("kp:notify a bh"));        // a strategy swap on the running guest's disk
            assertOk(c.ask("kp:notify a immediate"));
            String stats = c.ask("kp:stats --json a");
            assertTrue(stats.startsWith("{\"ok\":true,\"result\":{\"disk\": \"a\", \"queues\": ["), stats);
            assertTrue(stats.contains("\"vhost_user_export\": ["), stats);
            long kicks1 = kicks(c, "a");
            assertTrue(first.lines("RG-FIO-EXIT").isEmpty(), () -> "the guest's I/O should still run after the "
                    + "changes; make guest.fio longer:\n" + first.text());
            awaitTrue(() -> kicks(c, "a") > kicks1 + 100, 120, "the guest's I/O goes on after the changes");

            first.finish(GUEST_SECONDS);
            RealGuestOutput.assertFinished(first, 2);
            String guestSum = RealGuestOutput.guestSum(first);
            assertEquals(RealGuestOutput.md5(image, SUM_MB << 20), guestSum, "the image holds what the guest wrote");

            // The re-attached, re-exported disk serves a real guest too.
            RealGuestOutput.Boot secondBoot = bootGuest(guestCommand(bSock, "verify.fio", 1));
            OutputProcess second = secondBoot.guest();
            second.finish(GUEST_SECONDS);
            RealGuestOutput.assertFinished(second, 1);
            String list = c.ask("kp:vhost-list --json");
            // One session per QEMU started (a guest that stalled at boot is started once more).
            assertTrue(list.contains("\"disk\":\"b\"") && list.contains("\"sessions\":" + secondBoot.starts()),
                    list);
        }
        assertTrue(daemon.isAlive(), DaemonControlIT::daemonLog);
        String log = daemonLog();
        assertTrue(log.lines().anyMatch(l -> l.matches("\\S+Z INFO VhostUserServer: vhost-user a: front-end connected.*")),
                log);
        assertTrue(log.lines().allMatch(l -> l.matches("(\\S+Z (ERROR|WARN|INFO|DEBUG) \\S+: .*|  \\| .*)")),
                () -> "one event per line with a level:\n" + log);
    }

    // Harness.

    private static List<String> guestCommand(Path socket, String job, int queues) throws IOException {
        Path jobFile = work.resolve(job);
        try (InputStream in = DaemonControlIT.class.getResourceAsStream("/daemon/" + job)) {
            Files.write(jobFile, in.readAllBytes());
        }
        return List.of("bash", REALGUEST.resolve("realguest.sh").toString(), "run", CACHE.toString(), socket.toString(),
                jobFile.toString(), "--queues", Integer.toString(queues), "--sum-mb", Integer.toString(SUM_MB));
    }

    /** Starts a harness process, killed at the end of the class if it still runs. */
    private static OutputProcess startGuest(List<String> command) throws IOException {
        OutputProcess g = OutputProcess.start("guest", command);
        GUESTS.add(g);
        return g;
    }

    /** Boots a guest run (started once more if its kernel stalls at boot), killed at the end of the class. */
    private static RealGuestOutput.Boot bootGuest(List<String> command) throws Exception {
        RealGuestOutput.Boot boot = RealGuestOutput.boot("guest", command);
        GUESTS.add(boot.guest());
        return boot;
    }

    private static final Pattern KICKS = Pattern.compile("\"kicks\":(\\d+)");

    /** The kicks the export of {@code disk} has received (0 without a front-end). */
    private static long kicks(ControlClient c, String disk) {
        String answer = c.tryAsk("kp:vhost-list --json");
        int at = answer.indexOf("\"disk\":\"" + disk + "\"");
        if (at < 0) {
            return 0;
        }
        Matcher m = KICKS.matcher(answer);
        return m.find(at) ? Long.parseLong(m.group(1)) : 0;
    }

    private static void assertOk(String answer) {
        assertTrue(answer != null && answer.startsWith("{\"ok\":true,"), () -> answer + "\n" + daemonLog());
    }

    private static void assertError(String answer) {
        assertTrue(answer != null && answer.startsWith("{\"ok\":false,\"error\":\""), answer);
    }

    private static String daemonLog() {
        try {
            return Files.readString(daemonErr);
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    private static void awaitTrue(BooleanSupplier condition, long seconds, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + seconds + " s waiting until " + what + "\n" + daemonLog());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    record Run(int exit, List<String> out, List<String> err) {
    }

    private static Run connect(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", JAR.toString(), "--connect", control.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectInput(Redirect.from(new java.io.File("/dev/null"))).start();
        CompletableFuture<List<String>> err = CompletableFuture.supplyAsync(() -> lines(p.getErrorStream()));
        List<String> out = lines(p.getInputStream());
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        return new Run(p.exitValue(), out, err.join());
    }

    private static List<String> lines(InputStream in) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            return r.lines().toList();
        } catch (IOException e) {
            return List.of("(" + e + ")");
        }
    }
}
