package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.virtio.testkit.OutputProcess;
import io.kickplug.virtio.testkit.RealGuestOutput;
import java.io.File;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * A real QEMU guest (the vhost-user module's harness, its prepared initramfs shared with the other real-guest ITs) on
 * {@code kickplugd} started with qemu-storage-daemon's command line, the export on a listening socket the
 * parent made ({@code addr.type=fd,addr.str=N}: python3 binds it and execs kickplugd with it inherited): fio with
 * crc32c verify on two queues, the image's md5 equal to the guest's; SIGTERM then ends the daemon with status 0.
 * One boot: the Unix-socket form of the same command line is {@link QsdCommandLineIT}'s, with a vhost-user
 * front-end in the test.
 */
class QsdRealGuestIT {

    private static final Path JAR = Path.of(System.getProperty("kickplug.jar", "target/kickplug.jar")).toAbsolutePath();
    private static final long GUEST_SECONDS = 600;
    private static final int SUM_MB = 16;

    @Test
    void aRealGuestRunsVerifiedIoOnAnInheritedSocketExport() throws Exception {
        RealGuestHarness harness = RealGuestHarness.besideJar(JAR);
        harness.prepare("prepare");
        Path work = Files.createTempDirectory(Path.of("/tmp"), "kp-qsdg");
        Process daemon = null;
        OutputProcess guest = null;
        try {
            Path image = RealGuestHarness.sparseImage(work.resolve("disk.img"), 64L << 20);
            Path socket = work.resolve("vu.sock");
            Path pidfile = work.resolve("kp.pid");
            List<String> command = new ArrayList<>(List.of("python3", "-c", String.join("\n",
                    "import os, socket, sys",
                    "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
                    "s.bind(sys.argv[1])",
                    "s.listen(4)",
                    "os.set_inheritable(s.fileno(), True)",
                    "args = [a.replace('@FD@', str(s.fileno())) for a in sys.argv[2:]]",
                    "os.execv(args[0], args)"), socket.toString()));
            command.addAll(List.of("/bin/sh", JAR.resolveSibling("kickplugd").toString(),
                    "--blockdev", "driver=file,node-name=d0,filename=" + image,
                    "--export", "type=vhost-user-blk,id=e0,node-name=d0,addr.type=fd,addr.str=@FD@,writable=on,"
                            + "num-queues=2",
                    "--pidfile", pidfile.toString()));
            Path log = work.resolve("daemon.log");
            daemon = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Files.exists(pidfile)) {
                assertTrue(daemon.isAlive(), "the daemon ended before ready:\n" + Files.readString(log));
                assertTrue(System.nanoTime() - deadline < 0, "not ready in 120 s:\n" + Files.readString(log));
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
            Path job = work.resolve("verify.fio");
            try (InputStream in = QsdRealGuestIT.class.getResourceAsStream("/daemon/verify.fio")) {
                Files.write(job, in.readAllBytes());
            }
            RealGuestOutput.Boot boot = RealGuestOutput.boot("guest", harness.command("run",
                    harness.cache().toString(), socket.toString(), job.toString(), "--queues", "2", "--sum-mb",
                    Integer.toString(SUM_MB)));
            guest = boot.guest();
            guest.finish(GUEST_SECONDS);
            RealGuestOutput.assertFinished(guest, 2);
            assertEquals(RealGuestOutput.md5(image, SUM_MB << 20), RealGuestOutput.guestSum(guest),
                    "the image holds what the guest wrote");
            daemon.destroy(); // SIGTERM, by process id
            assertTrue(daemon.waitFor(60, TimeUnit.SECONDS), "the daemon stops on SIGTERM");
            assertEquals(0, daemon.exitValue(), Files.readString(log));
            assertTrue(!Files.exists(pidfile), "the pid file is removed at exit");
        } finally {
            if (guest != null) {
                guest.process.destroyForcibly();
            }
            RealGuestHarness.stop(daemon);
            RealGuestHarness.deleteTree(work);
        }
    }
}
