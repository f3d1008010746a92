package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.kickplug.virtio.testkit.OutputProcess;
import io.kickplug.virtio.testkit.RealGuestOutput;
import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 19's acceptance in a real guest: Kickplug runs as a daemon with an NBD disk
 * ({@code kp:attach --backend nbd --uri 'nbd+unix:///disk?socket=S'}) on a qemu-nbd the test starts, exported over
 * vhost-user; the real-guest harness of bundles/vhost-user boots a Linux guest (QEMU, TCG here) that runs fio
 * randwrite with crc32c verify in passes. While the guest writes, the test SIGKILLs qemu-nbd and starts it again
 * on the same socket and image, {@value #KILLS_DEFAULT} times ({@code kickplug.nbd.kills}). The NBD client
 * reconnects and sends again what the dead server had not answered. Checks: every fio pass exits 0 (verify passed,
 * no I/O error), the guest kernel log has no virtio or I/O error, the image holds what the guest read back (md5),
 * and the daemon logged its reconnects. One boot: a guest boot under TCG is the expensive part.
 */
class NbdRealGuestIT {

    private static final int KILLS_DEFAULT = 2;
    private static final int KILLS = Integer.getInteger("kickplug.nbd.kills", KILLS_DEFAULT);
    private static final long IMAGE_BYTES = 64L << 20;
    private static final int SUM_MB = 16;
    private static final long STEP_SECONDS = 120;

    private Path jar;
    private RealGuestHarness harness;
    private Path work;
    private Path image;
    private Path nbdSocket;
    private Path vhostSocket;
    private Process qemuNbd;
    private int servers;
    private Process daemon;
    private Path daemonLog;
    private OutputProcess guest;

    @BeforeEach
    void prepare() throws Exception {
        jar = LauncherJar.built();
        harness = RealGuestHarness.besideJar(jar);
        harness.prepare("nbd-guest");
        work = Files.createTempDirectory("kp-nbdg"); // short: sun_path holds 107 bytes
        image = RealGuestHarness.sparseImage(work.resolve("disk.raw"), IMAGE_BYTES);
        nbdSocket = work.resolve("qn.sock");
        vhostSocket = work.resolve("vhost.sock");
    }

    @AfterEach
    void cleanUp() throws Exception {
        RealGuestHarness.stop(guest == null ? null : guest.process);
        RealGuestHarness.stop(daemon);
        RealGuestHarness.stop(qemuNbd);
        RealGuestHarness.deleteTree(work);
    }

    private void startQemuNbd() throws IOException {
        Files.deleteIfExists(nbdSocket);
        servers++;
        qemuNbd = new ProcessBuilder("qemu-nbd", "-t", "-e", "8", "-f", "raw", "--cache=writeback", "-k",
                nbdSocket.toString(), "-x", "disk", image.toString()).redirectErrorStream(true)
                .redirectOutput(work.resolve("qemu-nbd" + servers + ".log").toFile()).start();
        awaitTrue(() -> Files.exists(nbdSocket), 30, "qemu-nbd " + servers + " listens");
    }

    @Test
    void theGuestVerifiesItsWritesOnAnNbdDiskAcrossNbdServerKills() throws Exception {
        startQemuNbd();
        Path script = Files.writeString(work.resolve("serve.gosh"), String.join("\n",
                "kp:attach --queues 2 --backend nbd --uri 'nbd+unix:///disk?socket=" + nbdSocket + "' n0",
                "kp:vhost n0 --socket " + vhostSocket + " --queues 2", ""));
        daemonLog = work.resolve("daemon.log");
        List<String> command = LauncherJar.command(jar, work);
        command.addAll(List.of("--daemon", "--verbose", "-f", script.toString()));
        daemon = new ProcessBuilder(command).directory(work.toFile()).redirectInput(Redirect.from(
                new java.io.File("/dev/null"))).redirectOutput(daemonLog.toFile()).redirectErrorStream(true).start();
        awaitTrue(() -> log().contains("listening on " + vhostSocket), STEP_SECONDS, "the daemon listens");

        guest = RealGuestOutput.boot("nbd-guest", harness.crashVerifyRun(vhostSocket, SUM_MB)).guest();
        assertTrue(guest.awaitLine("RG-FIO-BEGIN", STEP_SECONDS), () -> "fio did not start:\n" + guest.text());

        Random random = new Random();
        for (int kill = 1; kill <= KILLS; kill++) {
            awaitGuestWrites("before kill " + kill);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(random.nextInt(300)));
            assertTrue(guest.process.isAlive(), () -> "QEMU ended:\n" + guest.text());
            qemuNbd.destroyForcibly(); // SIGKILL: no NBD_CMD_DISC, replies lost
            assertTrue(qemuNbd.waitFor(30, TimeUnit.SECONDS), "qemu-nbd did not die");
            startQemuNbd();
        }
        awaitGuestWrites("after the last restart");
        guest.say("stop"); // the guest ends after its current pass
        guest.finish(STEP_SECONDS + 60);

        String report = "--- guest\n" + guest.text() + "\n--- daemon (NBD and errors)\n" + relevantLog();
        RealGuestHarness.assertVerifiedRun(guest, image, SUM_MB, report);
        long reconnects = log().lines().filter(l -> l.contains("connected again")).count();
        assertTrue(reconnects >= KILLS, () -> "the NBD client reconnected after every kill:\n" + report);
        System.out.println("NbdRealGuestIT: " + KILLS + " qemu-nbd SIGKILLs, " + guest.lines("RG-PASS").size()
                + " fio passes verified, " + reconnects + " NBD reconnects; "
                + guest.lines("RG: booting").stream().findFirst().orElse(""));
        daemon.destroy(); // SIGTERM: a clean stop
        assertTrue(daemon.waitFor(60, TimeUnit.SECONDS), "the daemon did not stop on SIGTERM");
    }

    /** Waits until the guest writes through the current qemu-nbd: the image is modified from now on. */
    private void awaitGuestWrites(String when) {
        FileTime now = FileTime.fromMillis(System.currentTimeMillis());
        awaitTrue(() -> {
            try {
                return Files.getLastModifiedTime(image).compareTo(now) > 0;
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }, STEP_SECONDS, "the guest writes through qemu-nbd " + servers + " (" + when + ")");
    }

    private String log() {
        try {
            return Files.readString(daemonLog, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private String relevantLog() {
        return String.join("\n", log().lines().filter(l -> l.contains("NBD") || l.contains("error")
                || l.contains("Exception") || l.contains("vhost-user")).toList());
    }

    private void awaitTrue(BooleanSupplier condition, long seconds, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + seconds + " s waiting until " + what + "\n--- guest\n"
                        + (guest == null ? "" : guest.text()) + "\n--- daemon\n" + relevantLog());
            }
            if (daemon != null && !daemon.isAlive()) {
                fail("the daemon ended (status " + daemon.exitValue() + ") while waiting until " + what + "\n" + log());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }
}
