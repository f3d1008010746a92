package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.rbd.MicroCeph;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two Kickplug daemons on one RBD image, as two hosts would be: two processes ({@code kickplug.jar --daemon
 * --control SOCK}) on the test cluster ({@link MicroCeph}), each with the image attached. They write in turn, and
 * each write is read back (fio verify_only) by the other daemon: librbd's exclusive lock passes to the writer.
 * Then the disk is detached on one daemon and attached again on the other, which finds every write.
 */
@ExtendWith(MicroCeph.class)
class RbdTwoDaemonsIT {

    private static final Path JAR = LauncherJar.built();

    private Path work;
    private final List<Process> daemons = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (Process d : daemons) {
            d.destroy(); // SIGTERM, by the process handle
        }
        for (Process d : daemons) {
            if (!d.waitFor(60, TimeUnit.SECONDS)) {
                d.destroyForcibly();
            }
        }
        if (work != null) {
            RealGuestHarness.deleteTree(work);
        }
    }

    /** A daemon with a control socket; returns the socket once it accepts. */
    private Path daemon(String name) throws Exception {
        Path control = work.resolve(name + ".sock");
        Path pid = work.resolve(name + ".pid");
        List<String> cmd = LauncherJar.command(JAR, work);
        cmd.addAll(List.of("--daemon", "--control", control.toString(), "--pidfile", pid.toString(), "--log-level",
                "info"));
        Process p = new ProcessBuilder(cmd).redirectOutput(work.resolve(name + ".out").toFile())
                .redirectError(work.resolve(name + ".err").toFile()).start();
        daemons.add(p);
        Conditions.await(() -> Files.exists(pid) || !p.isAlive(), "daemon " + name + " ready", 120);
        assertTrue(p.isAlive(), () -> name + " died: " + log(name));
        return control;
    }

    private String log(String name) {
        try {
            return Files.readString(work.resolve(name + ".err"));
        } catch (IOException e) {
            return e.toString();
        }
    }

    /** One statement on a daemon's control socket; its JSON answer, which must be ok. */
    private static String run(Path control, String statement) throws IOException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(control))) {
            ch.write(ByteBuffer.wrap((statement + "\n").getBytes(StandardCharsets.UTF_8)));
            StringBuilder answer = new StringBuilder();
            var in = Channels.newInputStream(ch);
            int c;
            while ((c = in.read()) >= 0 && c != '\n') {
                answer.append((char) c);
            }
            String a = answer.toString();
            assertTrue(a.startsWith("{\"ok\":true"), statement + " -> " + a);
            return a;
        }
    }

    private static String fio(String disk, int megabyte, int seed, boolean verifyOnly) {
        return "kp:fio " + disk + " --name=m" + megabyte + " --rw=randwrite --verify=crc32c --bs=4k --offset="
                + megabyte + "m --size=1m --iodepth=8 --ioengine=libaio --randseed=" + seed
                + (verifyOnly ? " --verify_only=1" : "");
    }

    @Test
    void theWriterTakesTheLockEachReadsTheOthersWritesAndADetachedDiskMovesWithEveryWrite(MicroCeph ceph)
            throws Exception {
        work = Files.createTempDirectory(Path.of("/tmp"), "kp-rbd2");
        String image = "two" + ProcessHandle.current().pid();
        ceph.rbd("create", "--size", "16M", "rbd/" + image);
        Path a = daemon("a");
        Path b = daemon("b");
        String attach = "kp:attach --backend rbd --pool rbd --image " + image + " --conf " + ceph.conf() + " r";
        run(a, attach);
        run(b, attach);
        for (int round = 0; round < 4; round++) {
            Path writer = round % 2 == 0 ? a : b;
            Path reader = round % 2 == 0 ? b : a;
            run(writer, fio("r", round, 100 + round, false));
            run(reader, fio("r", round, 100 + round, true));
            String status = ceph.rbd("status", "rbd/" + image);
            assertTrue(status.split("watcher=", -1).length == 3, "both daemons keep the image open: " + status);
        }
        // A writes more, then gives the disk up; B attaches it again and reads everything both wrote.
        run(a, fio("r", 8, 200, false));
        run(a, "kp:detach r");
        run(b, "kp:detach r");
        run(b, attach);
        for (int round = 0; round < 4; round++) {
            run(b, fio("r", round, 100 + round, true));
        }
        run(b, fio("r", 8, 200, true));
    }
}
