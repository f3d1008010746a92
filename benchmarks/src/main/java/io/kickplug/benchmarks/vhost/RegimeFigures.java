package io.kickplug.benchmarks.vhost;

import static io.kickplug.benchmarks.vhost.VhostBench.CLOCK_TICK_NS;
import static io.kickplug.benchmarks.vhost.VhostBench.perIo;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A run's regime counters ({@link RegimeProbe}'s deltas: the front-end's rounds, sleeps and preemptions, the server's
 * threads, Kickplug's {@code kp:stats}) as figures per I/O: the map of the JSON result and the line printed under
 * the run. The line is drawn from the same map, with the counters the JSON leaves out (re-checks, other threads'
 * time, batches by size).
 */
final class RegimeFigures {

    private RegimeFigures() {
    }

    /** The regime counters of a run for the JSON result, per I/O unless named otherwise. */
    static Map<String, Double> figures(Map<String, Long> d, long ios, long rounds, long feSleeps, long fePreempted) {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put("fe_io_per_round", perIo(ios, rounds));
        m.put("fe_sleeps_per_io", perIo(feSleeps, ios));
        m.put("fe_preempted_per_io", perIo(fePreempted, ios));
        m.put("io_thread_cpu_us_per_io", perIo(d.getOrDefault("io.ticks", 0L) * (double) CLOCK_TICK_NS / 1e3, ios));
        m.put("io_thread_sleeps_per_io", perIo(d.getOrDefault("io.sleeps", 0L), ios));
        m.put("io_thread_preempted_per_io", perIo(d.getOrDefault("io.preempted", 0L), ios));
        m.put("jit_ms", d.getOrDefault("jit.ticks", 0L) * 10.0);
        m.put("vm_ms", d.getOrDefault("vm.ticks", 0L) * 10.0);
        if (d.containsKey("kp.requests")) {
            long req = d.get("kp.requests");
            m.put("device_kicks_per_io", perIo(d.get("kp.avail_notifications"), req));
            m.put("device_calls_per_io", perIo(d.get("kp.interrupts_sent"), req));
            m.put("handler_runs_per_io", perIo(d.get("kp.batches"), req));
            m.put("poll_hits_per_io", perIo(d.get("kp.poll_hits"), req));
            m.put("poll_misses_per_io", perIo(d.get("kp.poll_misses"), req));
            m.put("poll_ns_per_io", perIo(d.get("kp.poll_ns"), req));
        }
        return m;
    }

    /** The regime line printed under a run: the {@link #figures} and the counters the JSON leaves out. */
    static String line(Map<String, Long> d, long ios, long rounds, long rechecks, long feSleeps, long fePreempted) {
        Map<String, Double> m = figures(d, ios, rounds, feSleeps, fePreempted);
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "fe: IO/round %.1f, rechecks/IO %.4f, sleeps/IO %.4f, preempted/IO %.4f",
                m.get("fe_io_per_round"), perIo(rechecks, ios), m.get("fe_sleeps_per_io"),
                m.get("fe_preempted_per_io")));
        b.append(String.format(Locale.ROOT, "; io thread: CPU/IO %.3f us, sleeps/IO %.4f, preempted/IO %.4f",
                m.get("io_thread_cpu_us_per_io"), m.get("io_thread_sleeps_per_io"),
                m.get("io_thread_preempted_per_io")));
        b.append(String.format(Locale.ROOT, "; jit %d ms, vm %d ms, other %d ms",
                d.getOrDefault("jit.ticks", 0L) * 10, d.getOrDefault("vm.ticks", 0L) * 10,
                d.getOrDefault("other.ticks", 0L) * 10));
        if (d.containsKey("kp.requests")) {
            b.append(String.format(Locale.ROOT, "; kp: kicks/IO %.4f, calls/IO %.4f, runs/IO %.4f,"
                    + " poll hits/IO %.4f, misses/IO %.5f, poll ns/IO %.0f",
                    m.get("device_kicks_per_io"), m.get("device_calls_per_io"), m.get("handler_runs_per_io"),
                    m.get("poll_hits_per_io"), m.get("poll_misses_per_io"), m.get("poll_ns_per_io")));
            b.append(", batches by size");
            d.forEach((k, v) -> {
                if (k.startsWith("kp.batch.") && v > 0) {
                    b.append(' ').append(k.substring(9)).append(':').append(v);
                }
            });
        }
        return b.toString();
    }
}
