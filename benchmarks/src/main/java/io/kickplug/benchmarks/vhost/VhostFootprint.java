package io.kickplug.benchmarks.vhost;

import io.kickplug.benchmarks.report.Provenance;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The storage daemon's footprint side by side with qemu-storage-daemon's (a measurement, not a test): one exported
 * null disk of 1 GiB (one queue, vhost-user-blk), started {@code --starts} times per server, the servers taking turns.
 * Per start:
 * <ul>
 * <li>ready: process start to ready (Kickplug: its control socket, which the launcher opens once the export is there;
 * QSD: its export socket), and the process's CPU time (user+sys) then;
 * <li>idle: resident memory (VmRSS, with its anonymous and file parts) and threads, {@code --idle} s after ready;
 * <li>load: {@link VhostBench}'s front-end at QD {@code --depth} (4 KiB random reads) for {@code --load} s: the
 * highest VmRSS and thread count sampled every 100 ms meanwhile, VmRSS once it ends, the IOPS and CPU per I/O.
 * </ul>
 * Printed: each start, then per server the medians. Wall times depend on the machine's load (printed with them);
 * memory, threads and CPU time much less.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.kickplug.benchmarks.vhost.VhostFootprint \
 *     [--launcher kickplugd[,jar]] [--starts 3] [--idle 5] [--load 10] [--depth 64] [--kickplugd-opts "..."] \
 *     [--java-opts ""] [--qsd /usr/bin/qemu-storage-daemon]
 * </pre>
 *
 * kickplugd runs with its default state folder, as a service does: a first start (not counted) makes the bundle
 * cache of a new build. {@code --launcher jar} is {@code java --java-opts -jar kickplug.jar --daemon} (the JVM's
 * default flags unless --java-opts names some). {@code scripts/footprint.sh} runs this.
 */
public final class VhostFootprint {

    private static final long DISK_BYTES = 1L << 30;
    private static final long CLOCK_TICK_NS = 10_000_000L; // CLK_TCK 100 on Linux x86

    /** One start of one server. */
    record Start(long readyMs, long cpuToReadyMs, long rssIdleKb, long anonIdleKb, long fileIdleKb, int threadsIdle,
            long rssLoadMaxKb, long rssAfterKb, int threadsLoadMax, double iops, double cpuUsPerIo, String load) {
    }

    private final Map<String, String> opts;
    private final VhostBench bench;

    private VhostFootprint(Map<String, String> opts, VhostBench bench) {
        this.opts = opts;
        this.bench = bench;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("launcher", "kickplugd");
        o.put("kickplugd", "distribution/target/kickplugd");
        o.put("kickplugd-opts", ""); // non-empty: KICKPLUG_JAVA_OPTS, replacing kickplugd's JVM flags
        o.put("jar", "distribution/target/kickplug.jar");
        o.put("java-opts", ""); // the jar launcher's JVM flags (none: the JVM's defaults)
        o.put("qsd", "/usr/bin/qemu-storage-daemon");
        o.put("starts", "3");
        o.put("idle", "5");
        o.put("load", "10");
        o.put("depth", "64");
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length || !o.containsKey(args[i].substring(2))) {
                System.err.println("usage: VhostFootprint [--name value]... with names " + o.keySet());
                System.exit(2);
            }
            o.put(args[i].substring(2), args[++i]);
        }
        Map<String, String> benchOpts = new LinkedHashMap<>(Map.of("ring", "split", "warmup", "1", "runtime",
                o.get("load")));
        VhostBench bench = new VhostBench(benchOpts, Provenance.ofThisProcess(Path.of(".")));
        try {
            new VhostFootprint(o, bench).run();
        } finally {
            bench.cleanUp();
        }
    }

    private void run() throws Exception {
        List<String> servers = new ArrayList<>(VhostBench.launchers(opts.get("launcher")));
        if (Files.isExecutable(Path.of(opts.get("qsd")))) {
            servers.add("qsd");
        } else {
            System.out.println("qemu-storage-daemon not found at " + opts.get("qsd") + ": Kickplug only");
        }
        int starts = Integer.parseInt(opts.get("starts"));
        System.out.println("one exported null disk (1 GiB, one queue, vhost-user-blk); load: the front-end at QD"
                + opts.get("depth") + ", 4 KiB random reads, " + opts.get("load") + " s; load average "
                + loadAverage());
        for (String s : servers) {
            if (!s.equals("qsd")) {
                Start first = start(s, false);
                System.out.printf(Locale.ROOT, "%-9s start 0 (not counted: makes the bundle cache of a new build):"
                        + " ready %d ms%n", s, first.readyMs());
            }
        }
        Map<String, List<Start>> all = new LinkedHashMap<>();
        Map<String, String> threadNames = new LinkedHashMap<>();
        System.out.printf(Locale.ROOT, "%-9s %5s %8s %8s %9s %9s %9s %6s %6s %9s %7s  %s%n", "server", "start",
                "ready ms", "cpu ms", "RSS idle", "anon/file", "RSS load", "after", "thr", "thr load", "CPU/IO",
                "load average");
        for (int r = 1; r <= starts; r++) {
            List<String> order = new ArrayList<>(servers);
            if (r % 2 == 0) {
                Collections.reverse(order); // neither server always goes first
            }
            for (String s : order) {
                Start st = start(s, true);
                all.computeIfAbsent(s, k -> new ArrayList<>()).add(st);
                System.out.printf(Locale.ROOT, "%-9s %5d %8d %8d %9s %9s %9s %6s %6d %9d %7.2f  %s%n", s, r,
                        st.readyMs(), st.cpuToReadyMs(), mb(st.rssIdleKb()),
                        mb(st.anonIdleKb()).trim() + "/" + mb(st.fileIdleKb()).trim(), mb(st.rssLoadMaxKb()),
                        mb(st.rssAfterKb()), st.threadsIdle(), st.threadsLoadMax(), st.cpuUsPerIo(), st.load());
                if (r == 1 && lastThreads != null) {
                    threadNames.put(s, lastThreads);
                }
            }
        }
        System.out.println();
        System.out.println("Medians of " + starts + " starts (memory in MiB; load average at the end "
                + loadAverage() + "):");
        System.out.printf(Locale.ROOT, "%-9s %8s %8s %9s %9s %9s %6s %8s %10s %7s%n", "server", "ready ms",
                "cpu ms", "RSS idle", "RSS load", "after", "thr", "thr load", "IOPS", "CPU/IO");
        for (Map.Entry<String, List<Start>> e : all.entrySet()) {
            List<Start> l = e.getValue();
            System.out.printf(Locale.ROOT, "%-9s %8d %8d %9s %9s %9s %6d %8d %10.0f %7.2f%n", e.getKey(),
                    median(l, Start::readyMs), median(l, Start::cpuToReadyMs), mb(median(l, Start::rssIdleKb)),
                    mb(median(l, Start::rssLoadMaxKb)), mb(median(l, Start::rssAfterKb)),
                    median(l, st -> st.threadsIdle()), median(l, st -> st.threadsLoadMax()),
                    (double) median(l, st -> Math.round(st.iops())),
                    median(l, st -> Math.round(st.cpuUsPerIo() * 1000)) / 1000.0);
        }
        for (Map.Entry<String, String> e : threadNames.entrySet()) {
            System.out.println();
            System.out.println(e.getKey() + "'s threads when idle (count, name):");
            System.out.print(e.getValue());
        }
    }

    private String lastThreads;

    /** One start: ready, idle, load, stop. */
    private Start start(String server, boolean withLoad) throws Exception {
        Path dir = bench.dir();
        Path socket = dir.resolve(server + ".sock");
        Path control = dir.resolve(server + "-ctl.sock");
        Files.deleteIfExists(socket);
        Files.deleteIfExists(control);
        List<String> cmd = new ArrayList<>();
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Path ready;
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        if (server.equals("qsd")) {
            cmd.addAll(List.of(opts.get("qsd"), "--blockdev",
                    "driver=null-co,node-name=n0,size=" + DISK_BYTES + ",read-zeroes=off", "--export",
                    "type=vhost-user-blk,id=e0,node-name=n0,writable=on,num-queues=1,addr.type=unix,addr.path="
                            + socket));
            ready = socket;
        } else {
            Path script = dir.resolve(server + ".gosh");
            Files.writeString(script, "kp:attach --backend null d0 " + DISK_BYTES + "\nkp:vhost d0 --socket " + socket
                    + "\n");
            if (server.equals("kickplugd")) {
                cmd.addAll(List.of("sh", opts.get("kickplugd")));
                pb.environment().put("JAVA", java);
                pb.environment().remove("KICKPLUG_JAVA_EXTRA");
                pb.environment().remove("KICKPLUG_JAVA_OPTS");
                if (!opts.get("kickplugd-opts").isBlank()) {
                    pb.environment().put("KICKPLUG_JAVA_OPTS", opts.get("kickplugd-opts"));
                }
            } else {
                cmd.add(java);
                for (String f : opts.get("java-opts").trim().split("\\s+")) {
                    if (!f.isEmpty()) {
                        cmd.add(f);
                    }
                }
                cmd.addAll(List.of("-jar", opts.get("jar"), "--daemon"));
            }
            cmd.addAll(List.of("--control", control.toString(), "-f", script.toString()));
            ready = control;
        }
        String load = loadAverage();
        long t0 = System.nanoTime();
        Process p = pb.redirectErrorStream(true).redirectOutput(dir.resolve(server + ".log").toFile()).start();
        try (VhostBench.Server s = new VhostBench.Server(server, p, socket)) {
            // The window's regime counters (VhostBench.measure reads them): threads, and kp:stats on the control socket.
            s.probe = new RegimeProbe(p.pid(), server.equals("qsd") ? null : control);
            while (!Files.exists(ready)) {
                if (!p.isAlive() || System.nanoTime() - t0 > TimeUnit.SECONDS.toNanos(60)) {
                    throw new IOException(server + " did not become ready: " + Files.readString(dir.resolve(server
                            + ".log")));
                }
                Thread.sleep(1); // not a spin: the daemon starting needs both cores
            }
            long readyMs = (System.nanoTime() - t0) / 1_000_000;
            long cpuMs = s.cpuTicks() * CLOCK_TICK_NS / 1_000_000;
            if (!withLoad) {
                return new Start(readyMs, cpuMs, 0, 0, 0, 0, 0, 0, 0, 0, 0, load);
            }
            Thread.sleep(Long.parseLong(opts.get("idle")) * 1000);
            long rssIdle = status(p.pid(), "VmRSS");
            long anon = status(p.pid(), "RssAnon");
            long file = status(p.pid(), "RssFile");
            int threadsIdle = threads(p.pid());
            lastThreads = threadNames(p.pid());
            AtomicLong rssMax = new AtomicLong();
            AtomicLong threadsMax = new AtomicLong();
            Thread sampler = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        rssMax.accumulateAndGet(status(p.pid(), "VmRSS"), Math::max);
                        threadsMax.accumulateAndGet(threads(p.pid()), Math::max);
                        Thread.sleep(100);
                    } catch (IOException | InterruptedException e) {
                        return;
                    }
                }
            }, "rss-sampler");
            bench.connect(s);
            sampler.start();
            VhostBench.Point point = bench.measure(s, Integer.parseInt(opts.get("depth")));
            long rssAfter = status(p.pid(), "VmRSS");
            sampler.interrupt();
            sampler.join();
            rssMax.accumulateAndGet(rssAfter, Math::max);
            return new Start(readyMs, cpuMs, rssIdle, anon, file, threadsIdle, rssMax.get(), rssAfter,
                    (int) threadsMax.get(), point.iops(), point.cpuUsPerIo(), load);
        }
    }

    private static long status(long pid, String key) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith(key + ":")) {
                return Long.parseLong(line.substring(key.length() + 1).trim().split("\\s+")[0]);
            }
        }
        return 0;
    }

    private static int threads(long pid) throws IOException {
        try (var s = Files.list(Path.of("/proc/" + pid + "/task"))) {
            return (int) s.count();
        }
    }

    /** The process's threads by name (digits at the end folded into N), with their counts. */
    private static String threadNames(long pid) throws IOException {
        Map<String, Integer> names = new TreeMap<>();
        try (var s = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : (Iterable<Path>) s::iterator) {
                try {
                    String name = Files.readString(t.resolve("comm")).trim().replaceAll("[0-9]+$", "N");
                    names.merge(name, 1, Integer::sum);
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        }
        StringBuilder sb = new StringBuilder();
        names.forEach((n, c) -> sb.append(String.format(Locale.ROOT, "  %2d %s%n", c, n)));
        return sb.toString();
    }

    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "?";
        }
    }

    private static long median(List<Start> starts, java.util.function.ToLongFunction<Start> f) {
        List<Long> v = new ArrayList<>();
        for (Start s : starts) {
            v.add(f.applyAsLong(s));
        }
        Collections.sort(v);
        return v.get((v.size() - 1) / 2);
    }

    private static String mb(long kb) {
        return String.format(Locale.ROOT, "%.1f", kb / 1024.0);
    }
}
