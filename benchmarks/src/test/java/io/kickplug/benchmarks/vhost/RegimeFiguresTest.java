package io.kickplug.benchmarks.vhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RegimeFiguresTest {

    private static Map<String, Long> kickplugCounters() {
        Map<String, Long> d = new LinkedHashMap<>();
        d.put("io.ticks", 50L); // 500 ms of I/O-thread CPU
        d.put("io.sleeps", 3_000L);
        d.put("io.preempted", 100L);
        d.put("jit.ticks", 2L);
        d.put("vm.ticks", 1L);
        d.put("other.ticks", 4L);
        d.put("kp.requests", 100_000L);
        d.put("kp.avail_notifications", 900L);
        d.put("kp.interrupts_sent", 2_000L);
        d.put("kp.batches", 3_000L);
        d.put("kp.poll_hits", 1_000L);
        d.put("kp.poll_misses", 10L);
        d.put("kp.poll_ns", 25_000_000L);
        d.put("kp.batch.32", 7L);
        d.put("kp.batch.1", 0L);
        return d;
    }

    @Test
    void figuresArePerIoOfTheRunsCounters() {
        Map<String, Double> m = RegimeFigures.figures(kickplugCounters(), 100_000, 3_125, 500, 20);
        assertEquals(32.0, m.get("fe_io_per_round"), 1e-9);
        assertEquals(0.005, m.get("fe_sleeps_per_io"), 1e-12);
        assertEquals(5.0, m.get("io_thread_cpu_us_per_io"), 1e-9);
        assertEquals(20.0, m.get("jit_ms"), 1e-9);
        assertEquals(0.009, m.get("device_kicks_per_io"), 1e-12);
        assertEquals(250.0, m.get("poll_ns_per_io"), 1e-9);
    }

    @Test
    void theLineShowsTheFiguresAndWhatTheJsonLeavesOut() {
        assertEquals("fe: IO/round 32.0, rechecks/IO 0.0010, sleeps/IO 0.0050, preempted/IO 0.0002"
                + "; io thread: CPU/IO 5.000 us, sleeps/IO 0.0300, preempted/IO 0.0010"
                + "; jit 20 ms, vm 10 ms, other 40 ms"
                + "; kp: kicks/IO 0.0090, calls/IO 0.0200, runs/IO 0.0300, poll hits/IO 0.0100, misses/IO 0.00010,"
                + " poll ns/IO 250, batches by size 32:7",
                RegimeFigures.line(kickplugCounters(), 100_000, 3_125, 100, 500, 20));
    }

    @Test
    void qsdHasNoKickplugPart() {
        Map<String, Long> d = new LinkedHashMap<>(Map.of("io.ticks", 10L));
        assertFalse(RegimeFigures.figures(d, 1_000, 10, 0, 0).containsKey("device_kicks_per_io"));
        assertFalse(RegimeFigures.line(d, 1_000, 10, 0, 0, 0).contains("kp:"));
    }
}
