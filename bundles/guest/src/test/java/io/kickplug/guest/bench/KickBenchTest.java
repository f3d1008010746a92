package io.kickplug.guest.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.lockstat.LockStats;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.guest.fio.JobSpec;
import io.kickplug.guest.fio.RwMode;
import io.kickplug.shell.testkit.GogoShell;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code kp:bench kick} through Gogo's parser on the real stack, with short runs: what it prints and that it
 * cleans up. No figure is asserted (the host is shared and noisy); the benchmark itself is run by hand.
 */
class KickBenchTest {

    private final DiskRegistry registry = InProcessHost.registry();
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();
    private final LockStats lockStats = new LockStats() {
        @Override
        public List<LockStatRow> rows() {
            return engine.locks().rows();
        }

        @Override
        public void reset() {
            engine.locks().reset();
        }
    };
    @RegisterExtension
    final GogoShell shell = new GogoShell();

    @BeforeEach
    void setUp() {
        BenchShells.addBench(shell, registry, engine, lockStats);
    }

    @AfterEach
    void tearDown() {
        registry.close();
    }

    @Test
    void theSeedJobFileIsTheOneTheFioTestsRun() throws IOException {
        try (InputStream in = KickBenchTest.class.getResourceAsStream("/fio/seed000.fio")) {
            assertEquals(new String(in.readAllBytes(), StandardCharsets.UTF_8), KickBench.seedJobFile());
        }
        List<JobSpec> jobs = KickBench.jobs(5_000_000_000L);
        assertEquals(4, jobs.size());
        for (JobSpec j : jobs) {
            assertEquals(RwMode.RANDREAD, j.rw());
            assertEquals(64, j.iodepth());
            assertEquals(4096, j.bsMin());
            assertEquals(5_000_000_000L, j.runtimeNanos(), "the seed's timeout=10 replaced by the runtime asked");
            assertTrue(j.timeBased());
            assertEquals("/dev/vdc", j.filename());
        }
    }

    @Test
    void runsBothPoliciesAtEachExitLatencyAndDetachesItsDisk() throws Exception {
        registry.attach(DiskSpec.memory("bench-kick", 1 << 20));
        String out = (String) shell.run("kp:bench kick --runtime 150ms --exit-us 1,20 --disk-size 16M");
        assertTrue(out.contains("guest: 4 vCPUs, kick policies under-lock vs outside-lock, injection latency 2.00 us, "
                + "EVENT_IDX on"), out);
        assertTrue(out.contains("disk: bench-kick-2, 16 MiB memory, mmio, 1 queue of 256"), out);
        assertTrue(out.contains("runs: 0.150s warm-up per policy discarded, then each exit latency with both "
                + "policies in alternating order"), out);
        assertTrue(out.contains("exit latency 1.00 us, injection latency 2.00 us"), out);
        assertTrue(out.contains("exit latency 20.00 us, injection latency 2.00 us"), out);
        assertEquals(2, out.lines().filter(l -> l.startsWith("  under-lock ")).count(), out);
        assertEquals(2, out.lines().filter(l -> l.startsWith("  outside-lock ")).count(), out);
        assertEquals(2, out.lines().filter(l -> l.startsWith("  IOPS outside-lock / under-lock: ")).count(), out);
        assertTrue(out.contains("summary"), out);
        // The benchmark's disk is gone, the user's is still there; the last run's vq lock has statistics.
        assertEquals(List.of("bench-kick"), registry.list().stream().map(d -> d.name()).toList());
        LockStatRow vq = engine.locks().rows().stream().filter(r -> r.name().equals("bench-kick-2 vq0")).findFirst()
                .orElseThrow();
        assertTrue(vq.acquisitions() > 0, vq.toString());
    }

    @Test
    void runsOnPciToo() throws Exception {
        String out = (String) shell.run("kp:bench kick --runtime=100ms --exit-us=5 --disk-size=8M "
                + "--transport=pci");
        assertTrue(out.contains("disk: bench-kick, 8 MiB memory, pci, 1 queue of 256"), out);
        assertEquals(1, out.lines().filter(l -> l.startsWith("  under-lock ")).count(), out);
        assertTrue(registry.list().isEmpty());
    }

    @Test
    void badArgumentsAreOneLineErrors() {
        assertEquals("unknown benchmark 'nope' (available: kick, seeds)", error("kp:bench nope"));
        assertTrue(error("kp:bench").startsWith("which benchmark? usage: kp:bench kick"));
        assertEquals("invalid --exit-us '1,,5': expected microseconds separated by commas, e.g. 1,10,50",
                error("kp:bench kick --exit-us 1,,5"));
        assertEquals("--runtime needs a value", error("kp:bench kick --runtime"));
        assertEquals("--runtime must be positive: 0", error("kp:bench kick --runtime 0"));
        assertEquals("unknown option --iodepth (expected --runtime, --exit-us, --disk-size or --transport)",
                error("kp:bench kick --iodepth 4"));
        assertEquals("--disk-size 4k must be a multiple of 512 of at least 1 MiB", error("kp:bench kick --disk-size 4k"));
        assertEquals("--exit-us is given twice", error("kp:bench kick --exit-us 1 --exit-us 2"));
        assertEquals("unknown transport 'isa' (expected mmio, pci or vhost-user)",
                error("kp:bench kick --transport isa"));
        assertTrue(registry.list().isEmpty(), "nothing attached by a refused benchmark");
    }

    private String error(String line) {
        return shell.refusal(Exception.class, line);
    }
}
