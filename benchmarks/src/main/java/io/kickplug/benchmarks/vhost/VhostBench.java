package io.kickplug.benchmarks.vhost;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.benchmarks.report.Provenance;
import io.kickplug.vhost.frontend.FrontendClient;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.newsclub.net.unix.KickplugPoll;

/**
 * Issue 12's side-by-side vhost-user benchmark: one front-end ({@link FrontendClient}: the protocol tests' client,
 * one queue, 4 KiB random reads at a fixed queue depth, EVENT_IDX, call-descriptor notifications) drives
 * Kickplug's vhost-user-blk export (a separate process: {@code --launcher kickplugd}, the service launcher with its
 * JVM flags, by default; {@code jar}, {@code java --java-opts -jar kickplug.jar --daemon}; or both, interleaved)
 * and, when
 * qemu-storage-daemon is installed, QSD's vhost-user-blk export, in the same run and interleaved point by point.
 * Per point: IOPS, latency percentiles (HdrHistogram, submit to harvest) and the backend process's CPU per I/O
 * (utime + stime from /proc/PID/stat over the measured window); the median of the runs, and Kickplug/QSD ratios.
 * Under each run's line, the counters that tell the regime it settled in ({@link RegimeProbe}), per I/O: the
 * front-end's completions per harvest round, re-checks, sleeps and preemptions; the server's I/O thread's CPU,
 * sleeps (voluntary context switches) and preemptions; the JIT, VM (Serial GC) and other threads' CPU time in the
 * window; and Kickplug's {@code kp:stats} of the export's queue: kicks received, calls sent, handler runs, poll
 * hits, misses and time, and the batches by size.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.kickplug.benchmarks.vhost.VhostBench \
 *     [--launcher kickplugd|jar|kickplugd,jar] [--kickplugd distribution/target/kickplugd] [--kickplugd-opts "..."]
 *     [--jar distribution/target/kickplug.jar] [--qsd /usr/bin/qemu-storage-daemon] [--runs 3] [--runtime 5]
 *     [--warmup 2] [--depths 1,32,64] [--backends null,file] [--java-opts "-XX:+UseSerialGC"] [--ring split]
 *     [--kp-commands "kp:notify d0 defer-call"] [--server-cpus 1] [--qsd-iothread-poll-max-ns 32768]
 *     [--kickplugd-extra "-XX:+PrintCompilation"] [--json FILE]
 * </pre>
 *
 * {@code --json FILE} also writes the results as JSON ({@link VhostJson}): the command line, git commit, date and
 * machine (provenance), the options, every run of every point with its median run, and the Kickplug/QSD ratios.
 * {@code io.kickplug.benchmarks.report.Figures} draws {@code docs/figures/} from such files in {@code docs/results/}.
 *
 * {@code --qsd-iothread-poll-max-ns N} puts QSD's export on an IOThread ({@code --object iothread,poll-max-ns=N},
 * the export's {@code iothread=}), so QSD polls too, as Kickplug's I/O thread does (its {@code kp:poll}, 32768 ns
 * by default); without it QSD serves the export from its main loop, which does not poll.
 *
 * {@code --server-cpus 1}, with the bench itself started under {@code taskset -c 0}, gives the front-end and each
 * server a core of their own (both servers alike).
 *
 * {@code --ring packed} asks for VIRTIO_F_RING_PACKED (bit 34): Kickplug offers it (its packed ring bundle) and
 * the queue is packed (VIRTIO 1.2 section 2.8); qemu-storage-daemon (libvhost-user) does not offer it and stays on
 * the split ring, which the output says.
 *
 * Backends: {@code null} (Kickplug {@code --backend null}, read-zeroes off by default; QSD {@code null-co} with
 * {@code read-zeroes=off}) and {@code file} (a raw 256 MiB file written before measuring, so in the page cache;
 * QSD's {@code file} driver with {@code aio=threads}, its default) and {@code rbd} (an existing Ceph RBD image,
 * {@code --rbd-image POOL/IMAGE} of the cluster {@code --rbd-conf CEPH_CONF}: Kickplug's {@code --backend rbd},
 * QSD's {@code rbd} driver from qemu-block-extra; write the image first, e.g. with {@code rbd bench --io-type write},
 * since librbd answers reads of objects never written without asking an OSD).
 */
public final class VhostBench {

    private static final long DISK_BYTES = 256L << 20;
    private static final int QUEUE_SIZE = 256;
    private static final int BLOCK = 4096;
    static final long CLOCK_TICK_NS = 10_000_000L; // CLK_TCK 100 on Linux x86

    private final Map<String, String> opts;
    private final Provenance provenance;
    private final Path dir;
    private final Path ram;

    VhostBench(Map<String, String> opts, Provenance provenance) throws IOException {
        this.opts = opts;
        this.provenance = provenance;
        this.dir = Files.createTempDirectory("kp-vhostbench");
        // Guest RAM in tmpfs, as QEMU's memfd; the disk image on the ordinary file system (in its page cache).
        this.ram = Files.createTempDirectory(Path.of("/dev/shm"), "kp-vhostbench");
    }

    /**
     * One measured point; {@code regime}: the counters that tell the regime the run settled in, by name
     * ({@link RegimeFigures#figures}; empty when not measured).
     */
    record Point(double iops, double cpuUsPerIo, long p50ns, long p99ns, long p999ns, double kicksPerIo,
            double waitsPerIo, Map<String, Double> regime) {

        Point(double iops, double cpuUsPerIo, long p50ns, long p99ns, long p999ns, double kicksPerIo,
                double waitsPerIo) {
            this(iops, cpuUsPerIo, p50ns, p99ns, p999ns, kicksPerIo, waitsPerIo, Map.of());
        }
    }

    /** A backend server process with its vhost-user socket. */
    static final class Server implements AutoCloseable {
        final String name;
        final Process process;
        final Path socket;
        FrontendClient client;
        FrontendClient.Queue queue;
        /** Reads the regime counters of this server (threads; Kickplug's kp:stats on its control socket). */
        RegimeProbe probe;

        Server(String name, Process process, Path socket) {
            this.name = name;
            this.process = process;
            this.socket = socket;
        }

        long cpuTicks() throws IOException {
            String stat = Files.readString(Path.of("/proc/" + process.pid() + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14 and 15)
        }

        @Override
        public void close() {
            try {
                if (client != null) {
                    client.close();
                }
            } catch (IOException e) {
                // the process goes anyway
            }
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        // First, so the load average is the one before the servers start.
        Provenance provenance = Provenance.ofThisProcess(codeDirectory());
        Map<String, String> o = new LinkedHashMap<>();
        // How Kickplug is started, one or more of: kickplugd (the service launcher, with its JVM flags; what
        // docs/service.md tells operators to run), jar (java --java-opts -jar kickplug.jar --daemon).
        o.put("launcher", "kickplugd");
        o.put("kickplugd", "distribution/target/kickplugd");
        o.put("kickplugd-opts", ""); // non-empty: KICKPLUG_JAVA_OPTS, replacing kickplugd's JVM flags
        o.put("kickplugd-extra", ""); // non-empty: KICKPLUG_JAVA_EXTRA, added to kickplugd's JVM flags
        o.put("jar", "distribution/target/kickplug.jar");
        o.put("qsd", "/usr/bin/qemu-storage-daemon");
        o.put("runs", "3");
        o.put("runtime", "5");
        o.put("warmup", "2");
        o.put("depths", "1,32,64");
        o.put("backends", "null,file");
        o.put("java-opts", "-XX:+UseSerialGC"); // the jar launcher's JVM flags
        o.put("ring", "split");
        o.put("kp-commands", ""); // extra daemon commands after kp:attach, ';'-separated (e.g. "kp:notify d0 bh")
        // CPUs both servers run on (taskset -c), e.g. "1" with the bench itself under "taskset -c 0": each side
        // then has a core of its own, as fio's cpus_allowed and QSD's pinned iothreads give; empty: no pinning.
        o.put("server-cpus", "");
        // QSD's export on an IOThread that polls with this poll-max-ns (QEMU's adaptive polling, as Kickplug's I/O
        // thread does with kp:poll); empty: QSD's default, the export on the main loop, which does not poll.
        o.put("qsd-iothread-poll-max-ns", "");
        o.put("json", ""); // a file for the results as JSON (VhostJson); empty: none
        o.put("rbd-conf", ""); // backend rbd: the cluster's ceph.conf
        o.put("rbd-image", ""); // backend rbd: POOL/IMAGE, an image both servers open (4k reads need no lock)
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length || !o.containsKey(args[i].substring(2))) {
                System.err.println("usage: VhostBench [--name value]... with names " + o.keySet());
                System.exit(2);
            }
            o.put(args[i].substring(2), args[++i]);
        }
        new VhostBench(o, provenance).run();
    }

    /** The folder of this class's jar (or classes), inside the work tree it was built in: where git is asked. */
    private static Path codeDirectory() {
        try {
            Path code = Path.of(VhostBench.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return Files.isDirectory(code) ? code : code.getParent();
        } catch (Exception e) {
            return Path.of(".");
        }
    }

    /** The folder of the run's sockets, scripts and logs; the guest RAM files' folder. */
    Path dir() {
        return dir;
    }

    /** Removes the run's folders. */
    void cleanUp() throws IOException {
        deleteTree(dir);
        deleteTree(ram);
    }

    private void run() throws Exception {
        int runs = Integer.parseInt(opts.get("runs"));
        List<String> launchers = launchers(opts.get("launcher"));
        int[] depths = Arrays.stream(opts.get("depths").split(",")).mapToInt(Integer::parseInt).toArray();
        boolean qsd = Files.isExecutable(Path.of(opts.get("qsd")));
        if (!qsd) {
            System.out.println("qemu-storage-daemon not found at " + opts.get("qsd") + ": Kickplug only");
        }
        Path image = dir.resolve("disk.img");
        List<VhostJson.Entry> entries = new ArrayList<>();
        StringBuilder table = new StringBuilder();
        table.append(String.format(Locale.ROOT, "%-5s %-3s %-9s %10s %9s %9s %9s %9s %8s %8s%n", "disk", "QD",
                "backend", "IOPS", "CPU/IO us", "p50 us", "p99 us", "p99.9 us", "kicks/IO", "waits/IO"));
        for (String backend : opts.get("backends").split(",")) {
            if (backend.equals("file")) {
                writeImage(image); // written, not sparse: its pages are then in the page cache
            }
            List<Server> servers = new ArrayList<>();
            try {
                for (String launcher : launchers) {
                    servers.add(startKickplug(launcher, kickplugName(launchers, launcher), backend, image));
                }
                if (qsd) {
                    servers.add(startQsd(backend, image));
                }
                for (Server s : servers) {
                    connect(s);
                }
                Map<String, List<Point>> results = new LinkedHashMap<>();
                for (int r = 0; r < runs; r++) {
                    for (int depth : depths) {
                        // Every other run measures QSD first: the frontend's JVM warms up over the first points,
                        // and a fixed order would hand that cost to the same server each time.
                        List<Server> order = new ArrayList<>(servers);
                        if (r % 2 == 1) {
                            Collections.reverse(order);
                        }
                        for (Server s : order) {
                            Point p = measure(s, depth);
                            results.computeIfAbsent(s.name + "@" + depth, k -> new ArrayList<>()).add(p);
                            System.out.printf(Locale.ROOT, "run %d %s %s QD%d: %.0f IOPS, %.2f us CPU/IO, p50 %.1f us,"
                                    + " p99 %.1f us, front-end kicks/IO %.4f, waits/IO %.4f%n", r + 1, backend, s.name,
                                    depth, p.iops(), p.cpuUsPerIo(), p.p50ns() / 1e3, p.p99ns() / 1e3, p.kicksPerIo(),
                                    p.waitsPerIo());
                            System.out.println("    " + lastRegime);
                        }
                    }
                }
                for (int depth : depths) {
                    Map<String, List<Point>> byServer = new LinkedHashMap<>();
                    for (Server s : servers) {
                        byServer.put(s.name, results.get(s.name + "@" + depth));
                    }
                    entries.add(new VhostJson.Entry(backend, depth, byServer));
                    Point q = qsd ? median(results.get("qsd@" + depth)) : null;
                    if (q != null) {
                        row(table, backend, depth, "qsd", q);
                    }
                    for (String launcher : launchers) {
                        Point k = median(results.get(kickplugName(launchers, launcher) + "@" + depth));
                        row(table, backend, depth, launcher, k);
                        if (q != null) {
                            table.append(String.format(Locale.ROOT,
                                    "%-5s %-3d %-9s %9.2fx %8.2fx %8.2fx %8.2fx %8.2fx%n", backend, depth,
                                    launcher.equals("kickplugd") ? "kpd/qsd" : "jar/qsd", k.iops() / q.iops(),
                                    k.cpuUsPerIo() / q.cpuUsPerIo(), (double) k.p50ns() / q.p50ns(),
                                    (double) k.p99ns() / q.p99ns(), (double) k.p999ns() / q.p999ns()));
                        }
                    }
                }
            } finally {
                servers.forEach(Server::close);
            }
        }
        String workload = "4 KiB random reads, one queue of " + QUEUE_SIZE + ", " + opts.get("ring") + " ring, EVENT_IDX;"
                + " " + runs + " runs of " + opts.get("runtime") + " s per point after " + opts.get("warmup")
                + " s of warm-up; CPU/IO = backend process CPU (utime+stime) per I/O";
        System.out.println();
        System.out.println("Medians of " + runs + " runs, " + opts.get("runtime") + " s per point after "
                + opts.get("warmup") + " s of warm-up; 4 KiB random reads, one queue, " + opts.get("ring")
                + " ring; CPU/IO = backend process CPU (utime+stime) per I/O:");
        System.out.print(table);
        if (!opts.get("json").isBlank()) {
            Path json = Path.of(opts.get("json"));
            Files.writeString(json, VhostJson.write(provenance, opts, workload, qsd ? qsdVersion() : null, entries));
            System.out.println("JSON: " + json.toAbsolutePath());
        }
        deleteTree(dir);
        deleteTree(ram);
    }

    /** The launchers of {@code --launcher} (kickplugd, jar; comma-separated, each once, at least one). */
    static List<String> launchers(String option) {
        List<String> launchers = new ArrayList<>();
        for (String l : option.split(",", -1)) { // -1: "jar," names an empty launcher, refused
            String name = l.trim();
            if (!name.equals("kickplugd") && !name.equals("jar")) {
                throw new IllegalArgumentException("--launcher: kickplugd or jar (or both, comma-separated), not "
                        + name);
            }
            if (launchers.contains(name)) {
                throw new IllegalArgumentException("--launcher names " + name + " twice");
            }
            launchers.add(name);
        }
        return launchers;
    }

    /**
     * The server name of a launcher in the results: the first launcher's is {@code kickplug} (the one the figure's
     * ratios are of), another's {@code kickplug-LAUNCHER}.
     */
    static String kickplugName(List<String> launchers, String launcher) {
        return launchers.get(0).equals(launcher) ? "kickplug" : "kickplug-" + launcher;
    }

    private static void row(StringBuilder table, String backend, int depth, String server, Point p) {
        table.append(String.format(Locale.ROOT, "%-5s %-3d %-9s %10.0f %9.2f %9.1f %9.1f %9.1f %8.4f %8.4f%n", backend,
                depth, server, p.iops(), p.cpuUsPerIo(), p.p50ns() / 1e3, p.p99ns() / 1e3, p.p999ns() / 1e3,
                p.kicksPerIo(), p.waitsPerIo()));
    }

    /** The run with the median CPU per I/O, with its own IOPS and latencies (per-column medians would mix runs). */
    private static Point median(List<Point> points) {
        return points.get(medianIndex(points));
    }

    /**
     * Where in {@code points} the run with the median CPU per I/O is (of an even count, the upper of the middle two;
     * of equal CPU, the earlier run first).
     */
    static int medianIndex(List<Point> points) {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < points.size(); i++) {
            order.add(i);
        }
        order.sort((a, b) -> Double.compare(points.get(a).cpuUsPerIo(), points.get(b).cpuUsPerIo()));
        return order.get(points.size() / 2);
    }

    /** The first line of {@code qemu-storage-daemon --version}. */
    private String qsdVersion() {
        try {
            Process p = new ProcessBuilder(opts.get("qsd"), "--version").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            p.waitFor(10, TimeUnit.SECONDS);
            String line = out.lines().findFirst().orElse("").trim();
            return line.isEmpty() ? opts.get("qsd") : line;
        } catch (IOException e) {
            return opts.get("qsd") + " (--version failed: " + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return opts.get("qsd");
        }
    }

    private Server startKickplug(String launcher, String name, String backend, Path image) throws Exception {
        Path socket = dir.resolve(launcher + "-" + backend + ".sock");
        Path script = dir.resolve("serve-" + launcher + "-" + backend + ".gosh");
        Path control = dir.resolve(launcher + "-" + backend + ".ctl");
        String attach = switch (backend) {
            case "null" -> "kp:attach --backend null d0 1G";
            case "rbd" -> "kp:attach --backend rbd --pool " + rbdPool() + " --image " + rbdImage() + " --conf "
                    + opts.get("rbd-conf") + " d0";
            default -> "kp:attach --backend file --file " + image + " d0";
        };
        StringBuilder extra = new StringBuilder();
        for (String c : opts.get("kp-commands").split(";")) {
            if (!c.isBlank()) {
                extra.append(c.trim()).append('\n');
            }
        }
        Files.writeString(script, attach + "\n" + extra + "kp:vhost d0 --socket " + socket + "\n");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = pinned();
        ProcessBuilder pb = new ProcessBuilder(cmd);
        if (launcher.equals("kickplugd")) {
            // The service launcher as operators run it, with this JVM's java; its own bundle cache, fresh.
            cmd.addAll(List.of("sh", opts.get("kickplugd"), "--state", dir.resolve("state-" + backend).toString(),
                    "--control", control.toString(), "-f", script.toString()));
            pb.environment().put("JAVA", java);
            pb.environment().remove("KICKPLUG_JAVA_EXTRA");
            pb.environment().remove("KICKPLUG_JAVA_OPTS");
            if (!opts.get("kickplugd-opts").isBlank()) {
                pb.environment().put("KICKPLUG_JAVA_OPTS", opts.get("kickplugd-opts"));
            }
            if (!opts.get("kickplugd-extra").isBlank()) {
                pb.environment().put("KICKPLUG_JAVA_EXTRA", opts.get("kickplugd-extra"));
            }
        } else {
            cmd.add(java);
            for (String f : opts.get("java-opts").trim().split("\\s+")) {
                if (!f.isEmpty()) {
                    cmd.add(f);
                }
            }
            cmd.addAll(List.of("-jar", opts.get("jar"), "--cache", dir.resolve("cache-" + backend).toString(),
                    "--daemon", "--control", control.toString(), "-f", script.toString()));
        }
        Process p = pb.command(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve(launcher + "-" + backend + ".log").toFile()).start();
        Server s = awaitSocket(new Server(name, p, socket));
        awaitControl(s, control);
        s.probe = new RegimeProbe(p.pid(), control);
        return s;
    }

    /** Waits until the daemon answers on its control socket (the regime probe's kp:stats). */
    private static void awaitControl(Server s, Path control) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(control)) {
            if (!s.process.isAlive() || System.nanoTime() > deadline) {
                s.close();
                throw new IOException(s.name + " did not create " + control);
            }
            Thread.sleep(50);
        }
    }

    private Server startQsd(String backend, Path image) throws Exception {
        Path socket = dir.resolve("qsd-" + backend + ".sock");
        String blockdev = switch (backend) {
            case "null" -> "driver=null-co,node-name=n0,size=" + DISK_BYTES + ",read-zeroes=off";
            case "rbd" -> "driver=rbd,node-name=n0,pool=" + rbdPool() + ",image=" + rbdImage() + ",conf="
                    + opts.get("rbd-conf");
            default -> "driver=file,node-name=n0,filename=" + image + ",aio=threads,cache.direct=off";
        };
        List<String> cmd = pinned();
        cmd.addAll(List.of(opts.get("qsd"), "--blockdev", blockdev));
        String export = "type=vhost-user-blk,id=e0,node-name=n0,writable=on,num-queues=1,addr.type=unix,addr.path="
                + socket;
        String pollMaxNs = opts.get("qsd-iothread-poll-max-ns").trim();
        if (!pollMaxNs.isEmpty()) {
            cmd.addAll(List.of("--object", "iothread,id=io0,poll-max-ns=" + Long.parseLong(pollMaxNs)));
            export += ",iothread=io0";
        }
        cmd.addAll(List.of("--export", export));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("qsd-" + backend + ".log").toFile()).start();
        Server s = awaitSocket(new Server("qsd", p, socket));
        s.probe = new RegimeProbe(p.pid(), null);
        return s;
    }

    private String rbdPool() {
        String spec = opts.get("rbd-image");
        if (opts.get("rbd-conf").isBlank() || !spec.contains("/")) {
            throw new IllegalArgumentException("backend rbd needs --rbd-conf CEPH_CONF and --rbd-image POOL/IMAGE");
        }
        return spec.substring(0, spec.indexOf('/'));
    }

    private String rbdImage() {
        rbdPool();
        return opts.get("rbd-image").substring(opts.get("rbd-image").indexOf('/') + 1);
    }

    /** The start of a server's command line: {@code taskset -c CPUS} when --server-cpus names CPUs. */
    private List<String> pinned() {
        List<String> cmd = new ArrayList<>();
        String cpus = opts.get("server-cpus").trim();
        if (!cpus.isEmpty()) {
            cmd.addAll(List.of("taskset", "-c", cpus));
        }
        return cmd;
    }

    private static Server awaitSocket(Server s) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(s.socket)) {
            if (!s.process.isAlive() || System.nanoTime() > deadline) {
                s.close();
                throw new IOException(s.name + " did not create " + s.socket);
            }
            Thread.sleep(50);
        }
        return s;
    }

    void connect(Server s) throws IOException {
        // 64 KiB per request slot from 1 MiB on (FrontendClient's layout): QD 64 needs 5 MiB.
        RingFormat ring = RingFormat.parse(opts.get("ring"));
        FrontendClient c = new FrontendClient(s.socket, ram.resolve("ram-" + s.name), 16L << 20,
                RingSelector.of(new VirtqueueFactoryComponent(), new PackedVirtqueueFactoryComponent()),
                new GuestMemoryFactoryComponent());
        s.client = c;
        c.callReaders(false);
        // No inflight area, no back-end channel: what the measured path needs, on both servers alike.
        c.negotiate(VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_SEG_MAX | VirtioBlk.F_BLK_SIZE | ring.feature(),
                VhostUser.PROTOCOL_F_REPLY_ACK | VhostUser.PROTOCOL_F_CONFIGURE_MEM_SLOTS);
        if (c.ringFormat() != ring) {
            System.out.println(s.name + " does not offer the " + ring.id() + " ring: it runs " + c.ringFormat().id());
        }
        s.queue = c.startQueue(0, c.initialBase(), false, QUEUE_SIZE, 0);
        s.queue.callSource().configureBlocking(false);
    }

    Point measure(Server s, int depth) throws Exception {
        long warmup = TimeUnit.SECONDS.toNanos(Long.parseLong(opts.get("warmup")));
        long runtime = TimeUnit.SECONDS.toNanos(Long.parseLong(opts.get("runtime")));
        FrontendClient c = s.client;
        FrontendClient.Queue q = s.queue;
        Histogram latency = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        SplittableRandom random = new SplittableRandom(depth);
        long sectors = DISK_BYTES / 512;
        long[] started = new long[depth];
        // Each slot's chain built once: fewer collection pauses of the front-end mid-run (5 instead of 27 in a
        // one-point run; a UsedBuffer per completion is what it still allocates). Both servers get the same.
        @SuppressWarnings("unchecked")
        List<BufferSpec>[] chains = new List[depth];
        for (int slot = 0; slot < depth; slot++) {
            chains[slot] = c.chain(slot, VirtioBlk.T_IN, BLOCK);
        }
        KickplugPoll.Set callWait = new KickplugPoll.Set(new java.io.FileDescriptor[] {
            q.callSource().getFileDescriptor()});
        ByteBuffer callBuf = ByteBuffer.allocate(64);
        q.driver.disableCallbacks();
        for (int slot = 0; slot < depth; slot++) {
            started[slot] = System.nanoTime();
            read(c, q, chains, slot, random.nextLong(sectors / 8) * 8);
        }
        if (q.driver.kickPrepare()) {
            q.kick();
        }
        long begin = System.nanoTime();
        long measureStart = begin + warmup;
        long end = measureStart + runtime;
        boolean measuring = false;
        long ios = 0;
        long kicks = 0; // the front-end's kicks and call waits in the measured window: the mode the run took
        long waits = 0;
        long rounds = 0; // harvest rounds that found completions, and re-checks after enabling that found some
        long rechecks = 0;
        java.util.Map<String, Long> probeStart = null;
        long[] selfStart = null;
        long ticksStart = 0;
        long now = begin;
        while (true) {
            int harvested = 0;
            UsedBuffer u;
            while ((u = q.driver.getUsed()) != null) {
                int slot = (Integer) u.token();
                now = System.nanoTime();
                if (c.status(slot) != VirtioBlk.S_OK) {
                    throw new IOException(s.name + ": request failed with status " + c.status(slot));
                }
                if (measuring) {
                    latency.recordValue(Math.min(now - started[slot], latency.getHighestTrackableValue()));
                    ios++;
                }
                harvested++;
                if (now < end) {
                    started[slot] = now;
                    read(c, q, chains, slot, random.nextLong(sectors / 8) * 8);
                }
            }
            if (harvested > 0 && measuring) {
                rounds++;
            }
            if (harvested > 0 && q.driver.kickPrepare()) {
                q.kick();
                if (measuring) {
                    kicks++;
                }
            }
            now = System.nanoTime();
            if (!measuring && now >= measureStart) {
                measuring = true;
                // The regime counters first (one kp:stats on Kickplug's control socket: a millisecond or so with
                // the front-end paused, alike for every server and build), then the window's clock and CPU.
                selfStart = RegimeProbe.selfSwitches();
                probeStart = s.probe.sample();
                now = System.nanoTime();
                ticksStart = s.cpuTicks();
                measureStart = now;
            }
            if (now >= end) {
                break;
            }
            if (harvested == 0) {
                // Sleep until the device's call notification, re-checking after enabling (Linux's virtqueue_enable_cb).
                if (!q.driver.enableCallbacks()) {
                    q.driver.disableCallbacks();
                    if (measuring) {
                        rechecks++;
                    }
                    continue;
                }
                if (measuring) {
                    waits++;
                }
                if (callWait.poll(10_000) == 0) {
                    throw new IOException(s.name + ": no completion within 10 s at QD" + depth);
                }
                callBuf.clear();
                q.callSource().read(callBuf);
                q.driver.disableCallbacks();
            }
        }
        long ticks = s.cpuTicks() - ticksStart;
        long[] selfEnd = RegimeProbe.selfSwitches();
        java.util.Map<String, Long> regime = RegimeProbe.delta(probeStart, s.probe.sample());
        double seconds = (now - measureStart) / 1e9;
        lastRegime = RegimeFigures.line(regime, ios, rounds, rechecks, selfEnd[0] - selfStart[0],
                selfEnd[1] - selfStart[1]);
        Map<String, Double> figures = RegimeFigures.figures(regime, ios, rounds, selfEnd[0] - selfStart[0],
                selfEnd[1] - selfStart[1]);
        // Let the requests still in flight come back (none is resubmitted after the end).
        long drainDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int outstanding = q.driver.inFlight();
        while (outstanding > 0 && System.nanoTime() < drainDeadline) {
            if (q.driver.getUsed() != null) {
                outstanding--;
            } else {
                q.driver.enableCallbacks();
                callWait.poll(100);
                callBuf.clear();
                q.callSource().read(callBuf);
            }
        }
        if (q.driver.inFlight() > 0) {
            throw new IOException(s.name + ": " + q.driver.inFlight() + " requests did not complete");
        }
        return new Point(ios / seconds, perIo(ticks * (double) CLOCK_TICK_NS / 1e3, ios),
                latency.getValueAtPercentile(50), latency.getValueAtPercentile(99),
                latency.getValueAtPercentile(99.9), perIo(kicks, ios), perIo(waits, ios), figures);
    }

    /** The regime line of the last {@link #measure}: counters per I/O (see {@link RegimeProbe}). */
    String lastRegime = "";

    static double perIo(double total, long ios) {
        return ios == 0 ? 0 : total / ios;
    }

    /** Submits a 4 KiB read of {@code sector} from {@code slot}, with the slot's chain built once. */
    private static void read(FrontendClient c, FrontendClient.Queue q, List<BufferSpec>[] chains, int slot,
            long sector) throws IOException {
        c.submitPrepared(q, slot, chains[slot], VirtioBlk.T_IN, sector);
    }

    private static void writeImage(Path image) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            byte[] chunk = new byte[1 << 20];
            Arrays.fill(chunk, (byte) 0x5a);
            for (long pos = 0; pos < DISK_BYTES; pos += chunk.length) {
                f.write(chunk);
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (var paths = Files.walk(root)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
