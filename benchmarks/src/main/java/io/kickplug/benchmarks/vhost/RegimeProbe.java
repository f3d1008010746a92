package io.kickplug.benchmarks.vhost;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.newsclub.net.unix.AFUNIXSocket;
import org.newsclub.net.unix.AFUNIXSocketAddress;

/**
 * The counters that tell which regime a VhostBench point settled in, read from outside the servers so that
 * nothing is added to their request paths: per thread of the server process ({@code /proc/PID/task/*}: CPU ticks,
 * voluntary context switches, that is sleeps, and involuntary ones, that is preemptions), grouped into the I/O
 * thread (Kickplug's {@code kickplug-blk-*}; QSD's main loop, or its IOThread), the JIT compilers, the VM thread
 * (Serial GC's collections run there) and the rest; and, for Kickplug, queue 0's {@code kp:stats --json} on its
 * control socket (kicks the device received, calls it sent, handler runs, poll hits, misses and time). A sample is
 * a flat map; {@link #delta} subtracts two.
 */
final class RegimeProbe {

    private static final Pattern NUMBER = Pattern.compile("\"([a-z_0-9+-]+)\":\\s*(-?\\d+)");
    private static final String[] STATS = {"requests", "avail_notifications", "avail_suppressed", "interrupts_sent",
        "interrupts_suppressed", "batches", "poll_hits", "poll_misses", "poll_ns"};

    private final long pid;
    private final Path control;

    /** @param control Kickplug's control socket, or {@code null} (QSD: threads only) */
    RegimeProbe(long pid, Path control) {
        this.pid = pid;
        this.control = control;
    }

    Map<String, Long> sample() throws IOException {
        Map<String, Long> m = new LinkedHashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                String stat;
                String status;
                try {
                    stat = Files.readString(task.resolve("stat"));
                    status = Files.readString(task.resolve("status"));
                } catch (IOException e) {
                    continue; // the thread ended
                }
                String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
                String group = group(comm, Long.parseLong(task.getFileName().toString()));
                add(m, group + ".ticks", ticks);
                add(m, group + ".sleeps", field(status, "voluntary_ctxt_switches"));
                add(m, group + ".preempted", field(status, "nonvoluntary_ctxt_switches"));
            }
        }
        if (control != null) {
            String json = statement("kp:stats --json d0");
            int queues = json.indexOf("\"vhost_user_export\"");
            int end = json.indexOf("}]", queues);
            Matcher x = NUMBER.matcher(json.substring(queues, end));
            Map<String, Long> q = new LinkedHashMap<>();
            while (x.find()) {
                q.putIfAbsent(x.group(1), Long.parseLong(x.group(2)));
            }
            for (String k : STATS) {
                m.put("kp." + k, q.getOrDefault(k, 0L));
            }
            int h = json.indexOf("\"batch_histogram\"", queues);
            Matcher b = NUMBER.matcher(json.substring(h + 18, json.indexOf('}', h)));
            while (b.find()) {
                m.put("kp.batch." + b.group(1), Long.parseLong(b.group(2)));
            }
        }
        return m;
    }

    private String group(String comm, long tid) {
        if (comm.startsWith("kickplug-blk") || comm.startsWith("IO ") || (control == null && tid == pid
                && !comm.startsWith("java"))) {
            return "io";
        }
        if (comm.contains("CompilerThre")) {
            return "jit";
        }
        if (comm.equals("VM Thread")) {
            return "vm";
        }
        return "other";
    }

    private static void add(Map<String, Long> m, String key, long v) {
        m.merge(key, v, Long::sum);
    }

    private static long field(String status, String name) {
        for (String line : status.split("\n")) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).trim());
            }
        }
        return 0;
    }

    /** One statement on the control socket; its answer line. */
    private String statement(String line) throws IOException {
        try (AFUNIXSocket s = AFUNIXSocket.newInstance()) {
            s.connect(AFUNIXSocketAddress.of(control.toFile()));
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
            String answer = in.readLine();
            if (answer == null || !answer.startsWith("{\"ok\":true")) {
                throw new IOException(line + ": " + answer);
            }
            return answer;
        }
    }

    static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new LinkedHashMap<>();
        after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0L)));
        return d;
    }

    /** The front-end thread's own sleeps and preemptions ({@code /proc/thread-self/status}). */
    static long[] selfSwitches() throws IOException {
        String status = Files.readString(Path.of("/proc/thread-self/status"));
        return new long[] {field(status, "voluntary_ctxt_switches"), field(status, "nonvoluntary_ctxt_switches")};
    }
}
