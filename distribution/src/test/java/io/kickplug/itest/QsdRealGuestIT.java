package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.qmp.Json;
import io.kickplug.qmp.testkit.QmpClient;
import io.kickplug.virtio.testkit.OutputProcess;
import io.kickplug.virtio.testkit.RealGuestOutput;
import java.io.File;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * A real QEMU guest (the vhost-user module's harness, its prepared initramfs shared with the other real-guest ITs) on
 * {@code kickplugd} started with qemu-storage-daemon's command line, the export on a listening socket the
 * parent made ({@code addr.type=fd,addr.str=N}: python3 binds it and execs kickplugd with it inherited): fio with
 * crc32c verify on two queues, the image's md5 equal to the guest's. The command line also opens a QMP monitor
 * ({@code --chardev socket,...,server=on,wait=off --monitor chardev=m0}); after fio, while the guest watches
 * /sys/block/vda/size, {@code block_resize} over QMP grows the node and the guest sees the new capacity (the kernel's
 * "capacity change" line; the back-end channel's configuration-change message, VIRTIO 1.2 section 5.2.6.2); then
 * {@code query-block-exports}, {@code block-export-del} with its BLOCK_EXPORT_DELETED event, and SIGTERM ends the
 * daemon with status 0. One boot: the Unix-socket form of the same command line is {@link QsdCommandLineIT}'s, with a
 * vhost-user front-end in the test. {@code -Dkickplug.qsdguest.daemon=/usr/bin/qemu-storage-daemon} runs the same
 * test, command line and QMP conversation against qemu-storage-daemon (not in the default build: a second boot).
 */
class QsdRealGuestIT {

    private static final Path JAR = Path.of(System.getProperty("kickplug.jar", "target/kickplug.jar")).toAbsolutePath();
    private static final long GUEST_SECONDS = 600;
    private static final int SUM_MB = 16;
    private static final long IMAGE_BYTES = 64L << 20;
    private static final long GROWN_BYTES = 80L << 20;
    /** The daemon run with qemu-storage-daemon's options: kickplugd beside the jar unless this property names one. */
    private static final String DAEMON = System.getProperty("kickplug.qsdguest.daemon", "");

    @Test
    void aRealGuestRunsVerifiedIoOnAnInheritedSocketExport() throws Exception {
        RealGuestHarness harness = RealGuestHarness.besideJar(JAR);
        harness.prepare("prepare");
        Path work = Files.createTempDirectory(Path.of("/tmp"), "kp-qsdg");
        Process daemon = null;
        OutputProcess guest = null;
        try {
            Path image = RealGuestHarness.sparseImage(work.resolve("disk.img"), IMAGE_BYTES);
            Path socket = work.resolve("vu.sock");
            Path qmp = work.resolve("qmp.sock");
            Path pidfile = work.resolve("kp.pid");
            List<String> command = new ArrayList<>(List.of("python3", "-c", String.join("\n",
                    "import os, socket, sys",
                    "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
                    "s.bind(sys.argv[1])",
                    "s.listen(4)",
                    "os.set_inheritable(s.fileno(), True)",
                    "args = [a.replace('@FD@', str(s.fileno())) for a in sys.argv[2:]]",
                    "os.execv(args[0], args)"), socket.toString()));
            command.addAll(DAEMON.isEmpty() ? List.of("/bin/sh", JAR.resolveSibling("kickplugd").toString())
                    : List.of(DAEMON));
            command.addAll(List.of(
                    "--chardev", "socket,id=m0,path=" + qmp + ",server=on,wait=off", "--monitor", "chardev=m0",
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
                    Integer.toString(SUM_MB), "--wait-resize"));
            guest = boot.guest();
            try (QmpClient c = QmpClient.negotiated(qmp)) {
                OutputProcess g = guest;
                assertTrue(guest.awaitLine("RG-RESIZE-WAIT", GUEST_SECONDS), () -> "no resize step:\n" + g.text());
                assertTrue(guest.has("RG-RESIZE-WAIT size=" + IMAGE_BYTES / 512), guest::text);
                // QAPI block_resize: node-name and size in bytes; the export's device then tells the front-end.
                say(c, "{\"execute\":\"block_resize\",\"arguments\":{\"node-name\":\"d0\",\"size\":"
                        + GROWN_BYTES + "}}", "{}");
                guest.finish(GUEST_SECONDS);
                RealGuestOutput.assertFinished(guest, 2);
                assertEquals(RealGuestOutput.md5(image, SUM_MB << 20), RealGuestOutput.guestSum(guest),
                        "the image holds what the guest wrote");
                guest.lines("RG-RESIZE").forEach(l -> System.out.println("QsdRealGuestIT guest: " + l));
                guest.lines("RG-KLOG").stream().filter(l -> l.contains("size") || l.contains("capacity"))
                        .forEach(l -> System.out.println("QsdRealGuestIT guest: " + l));
                if (DAEMON.isEmpty() || guest.has("RG-RESIZE-SEEN size=" + GROWN_BYTES / 512)) {
                    assertTrue(guest.has("RG-RESIZE-SEEN size=" + GROWN_BYTES / 512),
                            () -> "the guest saw no new capacity:\n" + g.text());
                    assertTrue(guest.lines("RG-KLOG").stream().anyMatch(l -> l.contains("vda: detected capacity "
                            + "change from " + IMAGE_BYTES / 512 + " to " + GROWN_BYTES / 512)),
                            () -> "the guest kernel's capacity change line:\n" + g.text());
                } else {
                    // Another daemon (qemu-storage-daemon 7.2 has no resize callback on its vhost-user-blk
                    // export: its guest keeps the old capacity): said, and the rest of the conversation compared.
                    System.out.println("QsdRealGuestIT: " + DAEMON + " did not tell the guest of the new size");
                }
                assertEquals(GROWN_BYTES, Files.size(image), "block_resize grew the file node's image");
                say(c, "{\"execute\":\"query-block-exports\"}", "[{\"id\": \"e0\", \"type\": \"vhost-user-blk\", "
                        + "\"node-name\": \"d0\", \"shutting-down\": false}]");
                say(c, "{\"execute\":\"block-export-del\",\"arguments\":{\"id\":\"e0\"}}", "{}");
                Map<String, Object> deleted = c.event("BLOCK_EXPORT_DELETED");
                System.out.println("QsdRealGuestIT QMP <- " + Json.write(deleted));
                assertEquals(Map.of("id", "e0"), deleted.get("data"));
                say(c, "{\"execute\":\"query-block-exports\"}", "[]");
            }
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

    /** Sends a QMP command and checks its return value; prints both sides for the log. */
    private static void say(QmpClient c, String command, String expected) throws Exception {
        System.out.println("QsdRealGuestIT QMP -> " + command);
        Map<String, Object> r = c.command(command);
        System.out.println("QsdRealGuestIT QMP <- " + Json.write(r));
        assertTrue(r.containsKey("return"), () -> command + " -> " + r);
        assertEquals(Json.parse(expected), r.get("return"), command); // as values: members in any order
    }
}
