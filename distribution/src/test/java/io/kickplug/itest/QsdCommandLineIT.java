package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.rbd.MicroCeph;
import io.kickplug.vhost.frontend.FrontendClient;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code kickplugd} given qemu-storage-daemon's command line, beside qemu-storage-daemon 7.2 given the same one: the
 * issue's {@code --blockdev driver=file,... --export type=vhost-user-blk,...,addr.type=unix,...} serves a vhost-user
 * front-end ({@link FrontendClient}: a write and its read-back through a queue, then the bytes in the image); the
 * same with {@code addr.type=fd,addr.str=N} on a listening socket the parent made (python3 binds it and execs the
 * daemon with it inherited); SIGTERM ends it with status 0, its socket and pid file gone; {@code --daemonize}
 * returns once ready; a QMP monitor from {@code --chardev}/{@code --monitor} takes {@code quit}; bad input gives one
 * line and status 1 with nothing left, where QSD fails too. An RBD image of the test cluster ({@link MicroCeph}) is
 * served from {@code --blockdev driver=rbd,...} the same way.
 */
@ExtendWith(MicroCeph.class)
class QsdCommandLineIT {

    private static final Path JAR = Path.of(System.getProperty("kickplug.jar", "target/kickplug.jar")).toAbsolutePath();
    private static final String QSD = "/usr/bin/qemu-storage-daemon";
    private static final long START_SECONDS = 120;
    /** Binds a listening Unix socket at argv[1] and execs argv[2:] with it inherited, "@FD@" replaced by its number. */
    private static final String FD_LAUNCHER = String.join("\n",
            "import os, socket, sys",
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
            "s.bind(sys.argv[1])",
            "s.listen(4)",
            "os.set_inheritable(s.fileno(), True)",
            "args = [a.replace('@FD@', str(s.fileno())) for a in sys.argv[2:]]",
            "os.execv(args[0], args)");

    private Path work;
    private final List<ProcessHandle> started = new ArrayList<>();

    @BeforeEach
    void work() throws IOException {
        // Short paths: sun_path holds 107 bytes.
        work = Files.createTempDirectory(Path.of("/tmp"), "kp-qsd");
        try (RandomAccessFile f = new RandomAccessFile(work.resolve("disk.img").toFile(), "rw")) {
            f.setLength(16L << 20);
        }
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (ProcessHandle p : started) {
            if (p.isAlive()) {
                p.destroyForcibly();
                p.onExit().get(30, TimeUnit.SECONDS);
            }
        }
        RealGuestHarness.deleteTree(work);
    }

    /** The issue's export, on {@code addr}. */
    private String export(String addr) {
        return "type=vhost-user-blk,id=e0,node-name=d0," + addr + ",writable=on,num-queues=2";
    }

    private String blockdev() {
        return "driver=file,node-name=d0,filename=" + work.resolve("disk.img");
    }

    private List<String> kickplugd(String... args) {
        Path script = JAR.resolveSibling("kickplugd");
        assertTrue(Files.isRegularFile(script), "no " + script + " (built by the distribution's package phase)");
        List<String> command = new ArrayList<>(List.of("/bin/sh", script.toString()));
        command.addAll(Arrays.asList(args));
        return command;
    }

    private static List<String> qsd(String... args) {
        Assumptions.assumeTrue(Files.isExecutable(Path.of(QSD)), "qemu-storage-daemon is not installed");
        List<String> command = new ArrayList<>(List.of(QSD));
        command.addAll(Arrays.asList(args));
        return command;
    }

    /** {@code command} run by python3 with a listening socket at {@code socket} inherited ("@FD@" in it). */
    private static List<String> withInheritedSocket(Path socket, List<String> command) {
        List<String> out = new ArrayList<>(List.of("python3", "-c", FD_LAUNCHER, socket.toString()));
        out.addAll(command);
        return out;
    }

    private record Daemon(Process process, Path out, Path err) {
        String log() throws IOException {
            return "stdout:\n" + Files.readString(out) + "\nstderr:\n" + Files.readString(err);
        }
    }

    private Daemon start(String name, List<String> command) throws IOException {
        Path out = work.resolve(name + ".out");
        Path err = work.resolve(name + ".err");
        Process p = new ProcessBuilder(command).directory(work.toFile()).redirectOutput(out.toFile())
                .redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        started.add(p.toHandle());
        return new Daemon(p, out, err);
    }

    private static void await(BooleanSupplier condition, String what, Daemon d) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_SECONDS);
        while (!condition.getAsBoolean()) {
            if (!d.process().isAlive() && !condition.getAsBoolean()) {
                throw new AssertionError("the daemon ended (status " + d.process().exitValue() + ") before " + what
                        + "\n" + d.log());
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out waiting for " + what + "\n" + d.log());
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    /** SIGTERM by process id; the status it ended with. */
    private static int terminate(Daemon d) throws Exception {
        d.process().destroy();
        assertTrue(d.process().waitFor(60, TimeUnit.SECONDS), "ended after SIGTERM\n" + d.log());
        return d.process().exitValue();
    }

    /** A write of {@code pattern} at sector 8 and its read-back through queue 1 (of the two), then the image's bytes. */
    private void frontEndWritesAndReads(Path socket, byte pattern) throws Exception {
        Path memory = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm", work.getFileName() + "-ram")
                : work.resolve("ram");
        // One front-end at a time (QSD and Kickplug alike): right after a front-end left, the daemon may still be
        // ending its session and refuse the next one, which then tries again.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            FrontendClient client;
            try {
                client = new FrontendClient(socket, memory, FrontendClient.MEMORY_BYTES,
                        new VirtqueueFactoryComponent(), new GuestMemoryFactoryComponent());
            } catch (IOException refused) {
                if (System.nanoTime() - deadline > 0) {
                    throw refused;
                }
                continue;
            }
            try (client) {
                try {
                    client.negotiate(0);
                } catch (IOException refused) {
                    if (System.nanoTime() - deadline > 0) {
                        throw refused;
                    }
                    continue;
                }
                FrontendClient.Queue q = client.startQueue(1, 0, false);
                client.writeReadVerify(q, 8, pattern, true);
                return;
            } finally {
                Files.deleteIfExists(memory);
            }
        }
    }

    private void assertImageHolds(byte pattern) throws IOException {
        byte[] sector = new byte[512];
        try (RandomAccessFile f = new RandomAccessFile(work.resolve("disk.img").toFile(), "r")) {
            f.seek(8 * 512L);
            f.readFully(sector);
        }
        for (byte b : sector) {
            assertEquals(pattern, b, "the write reached the image file");
        }
    }

    @Test
    void theIssuesCommandLineServesAFrontEndAndSigtermEndsItWithStatusZero() throws Exception {
        for (String which : List.of("kickplugd", "qsd")) {
            Path socket = work.resolve(which + ".sock");
            Path pidfile = work.resolve(which + ".pid");
            String[] args = {"--blockdev", blockdev(), "--export", export("addr.type=unix,addr.path=" + socket),
                "--pidfile", pidfile.toString()};
            Daemon d = start(which, which.equals("qsd") ? qsd(args) : kickplugd(args));
            await(() -> Files.exists(pidfile), "the pid file", d);
            assertEquals(Long.toString(d.process().pid()), Files.readString(pidfile).strip(), d.log());
            assertTrue(Files.exists(socket), d.log());
            byte pattern = (byte) (which.equals("qsd") ? 0x3c : 0x5a);
            frontEndWritesAndReads(socket, pattern);
            assertEquals(0, terminate(d), which + " ends with status 0 on SIGTERM\n" + d.log());
            assertFalse(Files.exists(socket), which + " removed its socket");
            assertFalse(Files.exists(pidfile), which + " removed its pid file");
            assertImageHolds(pattern);
            assertFalse(Files.readString(d.err()).contains("error"), d.log());
        }
    }

    @Test
    void anInheritedListeningSocketByDescriptorNumber() throws Exception {
        for (String which : List.of("kickplugd", "qsd")) {
            Path socket = work.resolve(which + "-fd.sock");
            Path pidfile = work.resolve(which + ".pid");
            String[] args = {"--blockdev", blockdev(), "--export", export("addr.type=fd,addr.str=@FD@"),
                "--pidfile", pidfile.toString()};
            Daemon d = start(which, withInheritedSocket(socket, which.equals("qsd") ? qsd(args) : kickplugd(args)));
            await(() -> Files.exists(pidfile), "the pid file", d);
            byte pattern = (byte) (which.equals("qsd") ? 0x11 : 0x22);
            frontEndWritesAndReads(socket, pattern);
            // A second front-end after the first left: the inherited socket still listens.
            frontEndWritesAndReads(socket, (byte) (pattern + 1));
            assertEquals(0, terminate(d), which + " ends with status 0 on SIGTERM\n" + d.log());
            assertImageHolds((byte) (pattern + 1));
        }
    }

    @Test
    void daemonizeReturnsOnceReadyAndAQmpMonitorTakesQuit() throws Exception {
        for (String which : List.of("kickplugd", "qsd")) {
            Path socket = work.resolve(which + ".sock");
            Path qmp = work.resolve(which + "-qmp.sock");
            Path pidfile = work.resolve(which + ".pid");
            String[] args = {"--chardev", "socket,id=m0,path=" + qmp + ",server=on,wait=off", "--monitor", "chardev=m0",
                "--blockdev", blockdev(), "--export", export("addr.type=unix,addr.path=" + socket),
                "--pidfile", pidfile.toString(), "--daemonize"};
            Daemon d = start(which, which.equals("qsd") ? qsd(args) : kickplugd(args));
            assertTrue(d.process().waitFor(START_SECONDS, TimeUnit.SECONDS), which + " returned\n" + d.log());
            assertEquals(0, d.process().exitValue(), d.log());
            // Ready when the parent returned: the pid file names the detached daemon, its sockets listen.
            long pid = Long.parseLong(Files.readString(pidfile).strip());
            assertNotEquals(d.process().pid(), pid);
            ProcessHandle daemon = ProcessHandle.of(pid).orElseThrow(() -> new AssertionError("no process " + pid));
            started.add(daemon);
            assertTrue(Files.exists(socket) && Files.exists(qmp), d.log());
            List<String> replies = qmpConversation(qmp, "{\"execute\":\"qmp_capabilities\"}",
                    "{\"execute\":\"query-block-exports\"}", "{\"execute\":\"quit\"}");
            assertTrue(replies.get(0).startsWith("{\"QMP\":") || replies.get(0).startsWith("{\"QMP\": "),
                    replies.toString());
            assertTrue(replies.get(2).replace(" ", "").contains("\"node-name\":\"d0\""), replies.toString());
            assertTrue(replies.get(2).replace(" ", "").contains("\"type\":\"vhost-user-blk\""), replies.toString());
            daemon.onExit().get(60, TimeUnit.SECONDS);
            assertFalse(daemon.isAlive(), which + " ended after quit");
            assertFalse(Files.exists(socket), which + " removed its export's socket");
        }
    }

    @Test
    void anNbdServerAndExportFromTheCommandLine() throws Exception {
        for (String which : List.of("kickplugd", "qsd")) {
            Path socket = work.resolve(which + "-nbd.sock");
            Path pidfile = work.resolve(which + ".pid");
            String[] args = {"--blockdev", blockdev(), "--nbd-server", "addr.type=unix,addr.path=" + socket,
                "--export", "type=nbd,id=n0,node-name=d0,name=disk0,writable=on", "--pidfile", pidfile.toString()};
            Daemon d = start(which, which.equals("qsd") ? qsd(args) : kickplugd(args));
            await(() -> Files.exists(pidfile), "the pid file", d);
            Process info = new ProcessBuilder("qemu-img", "info", "--output=json",
                    "nbd+unix:///disk0?socket=" + socket).redirectErrorStream(true).start();
            String out = new String(info.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(info.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, info.exitValue(), which + ": " + out + "\n" + d.log());
            assertTrue(out.replace(" ", "").contains("\"virtual-size\":" + (16L << 20)), which + ": " + out);
            assertEquals(0, terminate(d), which + " ends with status 0 on SIGTERM\n" + d.log());
            if (which.equals("kickplugd")) {
                // (QSD 7.2 leaves its NBD server's socket file behind.)
                assertFalse(Files.exists(socket), which + " removed its NBD socket");
            }
        }
    }

    /**
     * An RBD image of the test cluster from the command line ({@code --blockdev driver=rbd,...}, QEMU's
     * BlockdevOptionsRbd), exported over vhost-user with a QMP monitor: a front-end's write and read-back through the
     * socket land in the image ({@code rbd export}); query-named-block-nodes shows the node; {@code block_resize}
     * grows the image itself. Kickplug alone: an {@code rbd resize} by another client reaches the node's disk. QSD
     * (with Debian's qemu-block-extra, its rbd driver) takes the same command line.
     */
    @Test
    void anRbdImageFromTheCommandLine(MicroCeph ceph) throws Exception {
        for (String which : List.of("kickplugd", "qsd")) {
            if (which.equals("qsd") && !qsdHasRbd()) {
                continue; // QSD's rbd driver is a module of Debian's qemu-block-extra
            }
            String image = which + "-" + ProcessHandle.current().pid();
            ceph.rbd("create", "--size", "16M", "rbd/" + image);
            Path socket = work.resolve(which + "-rbd.sock");
            Path qmp = work.resolve(which + "-rbd-qmp.sock");
            Path pidfile = work.resolve(which + ".pid");
            String[] args = {"--chardev", "socket,id=m0,path=" + qmp + ",server=on,wait=off", "--monitor", "chardev=m0",
                "--blockdev", "driver=rbd,node-name=d0,pool=rbd,image=" + image + ",conf=" + ceph.conf() + ",user=admin",
                "--export", export("addr.type=unix,addr.path=" + socket), "--pidfile", pidfile.toString()};
            Daemon d = start(which, which.equals("qsd") ? qsd(args) : kickplugd(args));
            await(() -> Files.exists(pidfile), "the pid file", d);
            byte pattern = (byte) (which.equals("qsd") ? 0x4b : 0x6d);
            frontEndWritesAndReads(socket, pattern);
            String nodes = qmpConversation(qmp, "{\"execute\":\"qmp_capabilities\"}",
                    "{\"execute\":\"query-named-block-nodes\"}").get(2).replace(" ", "");
            assertTrue(nodes.contains("\"drv\":\"rbd\"") && nodes.contains("\"virtual-size\":" + (16L << 20)),
                    which + ": " + nodes);
            List<String> resized = qmpConversation(qmp, "{\"execute\":\"qmp_capabilities\"}",
                    "{\"execute\":\"block_resize\",\"arguments\":{\"node-name\":\"d0\",\"size\":33554432}}");
            assertTrue(resized.get(2).contains("\"return\""), which + ": " + resized);
            assertTrue(ceph.rbd("info", "rbd/" + image).contains("size 32 MiB"), which + ": the image grew");
            if (which.equals("kickplugd")) {
                // Another client grows the image: the node's disk takes the size (librbd's update watch).
                ceph.rbd("resize", "--size", "48M", "rbd/" + image);
                await(() -> {
                    try {
                        return qmpConversation(qmp, "{\"execute\":\"qmp_capabilities\"}",
                                "{\"execute\":\"query-named-block-nodes\"}").get(2).replace(" ", "")
                                .contains("\"virtual-size\":" + (48L << 20));
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }, "the node taking the size rbd resize gave the image", d);
            }
            assertEquals(0, terminate(d), which + " ends with status 0 on SIGTERM\n" + d.log());
            byte[] exported = ceph.rbdBytes("export", "rbd/" + image, "-");
            for (int i = 8 * 512; i < 9 * 512; i++) {
                assertEquals(pattern, exported[i], which + ": the write reached the image");
            }
            assertFalse(Files.exists(socket), which + " removed its socket");
        }
    }

    /** Whether QEMU's rbd block module is installed (/usr/lib/MULTIARCH/qemu/block-rbd.so, qemu-block-extra). */
    private static boolean qsdHasRbd() throws IOException {
        try (var dirs = Files.list(Path.of("/usr/lib"))) {
            return Files.isExecutable(Path.of(QSD))
                    && dirs.anyMatch(d -> Files.exists(d.resolve("qemu").resolve("block-rbd.so")));
        }
    }

    /** The greeting and one reply per command (events skipped), each one line of JSON. */
    private static List<String> qmpConversation(Path socket, String... commands) throws IOException {
        List<String> replies = new ArrayList<>();
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            BufferedReader in = new BufferedReader(new InputStreamReader(Channels.newInputStream(ch),
                    StandardCharsets.UTF_8));
            OutputStream out = Channels.newOutputStream(ch);
            replies.add(in.readLine());
            for (String c : commands) {
                out.write((c + "\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
                String line;
                do {
                    line = in.readLine();
                } while (line != null && line.contains("\"event\""));
                replies.add(line);
            }
        }
        return replies;
    }

    @Test
    void badInputIsOneLineAndStatusOneWithNothingLeft() throws Exception {
        Path socket = work.resolve("bad.sock");
        Path pidfile = work.resolve("bad.pid");
        String good = "addr.type=unix,addr.path=" + socket;
        List<List<String>> cases = List.of(
                List.of("--no-such-option"),
                List.of("--blockdev", "driver=no-such-driver,node-name=d0"),
                List.of("--blockdev", "driver=file,node-name=d0,filename=" + work.resolve("disk.img") + ",colour=red"),
                List.of("--blockdev", "{\"driver\": \"file\", \"node-name\": "),
                List.of("--blockdev", "driver=file,node-name=d0,bad key=1"),
                List.of("--blockdev", "driver=rbd,node-name=d0,pool=rbd"),
                List.of("--blockdev", blockdev(), "--export", export(good).replace("node-name=d0", "node-name=nope")),
                List.of("--blockdev", blockdev(), "--export", export(good) + ",colour=red"),
                List.of("--chardev", "socket,path=" + work.resolve("m.sock") + ",server=on,wait=off"),
                // A monitor and an export made before the failing option are gone with the daemon.
                List.of("--chardev", "socket,id=m0,path=" + work.resolve("m.sock") + ",server=on,wait=off",
                        "--monitor", "m0", "--blockdev", blockdev(), "--export", export(good),
                        "--blockdev", "driver=no-such-driver,node-name=d1"),
                // --daemonize: the command started prints the daemon's error line and ends with its status.
                List.of("--daemonize", "--blockdev", "driver=no-such-driver,node-name=d0"));
        for (List<String> bad : cases) {
            List<String> args = new ArrayList<>(bad);
            args.addAll(List.of("--pidfile", pidfile.toString()));
            Daemon kp = start("bad-kp", kickplugd(args.toArray(String[]::new)));
            Daemon q = start("bad-qsd", qsd(args.toArray(String[]::new)));
            assertTrue(kp.process().waitFor(START_SECONDS, TimeUnit.SECONDS), bad + ": kickplugd ended");
            assertTrue(q.process().waitFor(START_SECONDS, TimeUnit.SECONDS), bad + ": qsd ended");
            assertEquals(1, q.process().exitValue(), bad + ": QSD refuses it too\n" + q.log());
            assertEquals(1, kp.process().exitValue(), bad + "\n" + kp.log());
            List<String> lines = Files.readAllLines(kp.err()).stream().filter(l -> !l.isBlank())
                    .collect(Collectors.toList());
            assertEquals(1, lines.size(), bad + ": one error line\n" + kp.log());
            assertTrue(lines.get(0).startsWith("error: "), lines.toString());
            String qsdLine = Files.readString(q.err()).strip();
            // The same words as QSD's line where the check is the same.
            String qsdCause = qsdLine.substring(qsdLine.lastIndexOf(": ") + 2);
            if (!bad.get(0).equals("--no-such-option") && !bad.get(bad.size() - 1).startsWith("{")) {
                assertTrue(lines.get(0).endsWith(qsdCause), "kickplugd: " + lines.get(0) + "\nqsd: " + qsdLine);
            }
            assertFalse(Files.exists(pidfile), bad + ": no pid file");
            assertFalse(Files.exists(socket), bad + ": no socket left");
            assertFalse(Files.exists(work.resolve("m.sock")), bad + ": no monitor socket left");
        }
    }
}
