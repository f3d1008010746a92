package io.kickplug.guest.bench;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.lockstat.LockStats;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.guest.testing.EndOfBatchNotifier;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.notify.NotifierRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.shell.testkit.GogoShell;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kp:bench seeds --runtime 0.02 --clock virtual --charging model} end to end through Gogo's parser on the real device, transport and
 * guest engine: every seed's lines are there, the JSON file parses back, the temporary disks are gone. No
 * figure is asserted (the host is shared and noisy).
 *
 * <p>The batching bundle is not on this module's class path (it depends on this one), so the registry gets a
 * test strategy named "defer-call" that decides once per batch (at {@link CompletionNotifier#end}); "bh" stays
 * unbound, which exercises the report's fallback note.
 */
class SeedsBenchTest {

    private final NotifierRegistry notifiers = new NotifierRegistry();
    private final DiskRegistry registry = InProcessHost.registry(notifiers);
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();
    @RegisterExtension
    final GogoShell shell = new GogoShell();
    private SeedsBench bench;

    @BeforeEach
    void setUp() {
        notifiers.add("defer-call", new EndOfBatchNotifier(), 0, 1);
        DiskManager disks = registry;
        // The guest's vq locks and the device's tracked-requests locks in one table, as the LockStats service.
        LockStats lockStats = new LockStats() {
            @Override
            public List<LockStatRow> rows() {
                List<LockStatRow> rows = new ArrayList<>(engine.locks().rows());
                rows.addAll(registry.lockStats());
                return rows;
            }

            @Override
            public void reset() {
                engine.locks().reset();
                registry.resetLockStats();
            }
        };
        NotificationControl notifications = registry;
        bench = new SeedsBench(disks, new VirtqueueFactoryComponent(), engine, lockStats, notifications);
        BenchShells.addBench(shell, registry, engine, lockStats);
    }

    @AfterEach
    void tearDown() {
        registry.close();
    }

    @Test
    @Timeout(value = 400, unit = TimeUnit.SECONDS)
    void everySeedReportsItsPointsBesideThePublishedFigureAndTheJsonParsesBack(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("sub/seeds.json");
        Path html = dir.resolve("seeds.html");
        // Virtual time charged by the model only: the same figures on any host, and fast.
        String out = (String) shell.run("kp:bench seeds --runtime 0.02 --rounds 1 --clock virtual --charging model"
                + " --json " + json + " --html " + html);
        for (String id : List.of("000", "001", "002", "003", "004")) {
            assertTrue(out.contains("\nseed " + id + ": "), id + "\n" + out);
        }
        assertEquals(5, out.lines().filter(l -> l.startsWith("  published: ")).count(), out);
        assertEquals(5, out.lines().filter(l -> l.startsWith("  measured:  ")).count(), out);
        assertEquals(5, out.lines().filter(l -> l.startsWith("  direction: ")).count(), out);
        // Points: 000 two policies at three exit costs, 001 two, 002 three strategies at two depths, 003 two,
        // 004 three lock kinds; each states its parameters.
        List<String> points = out.lines().filter(l -> l.contains(" | vcpus ")).toList();
        assertEquals(8 + 2 + 6 + 2 + 3, points.size(), out);
        for (String p : points) {
            for (String param : List.of("numjobs ", "iodepth ", "bs 4k", "rw ", "queues ", "iothreads ", "exit ",
                    "inject ", "backend ", "runtime 0.020s")) {
                assertTrue(p.contains(param), param + " missing in: " + p);
            }
            assertTrue(p.contains("| IOPS "), p);
        }
        assertTrue(out.contains("  under-lock exit 50us ioeventfd off "), out);
        assertTrue(out.contains("  outside-lock exit 50us ioeventfd on "), out);
        // Seed 000's device is QEMU's: avail_event after every pop (section 2.7.10), on every point.
        assertEquals(8, points.stream().filter(p -> p.contains(", avail-event pop, ")).count(), out);
        assertEquals(5, out.lines().filter(l -> l.startsWith("  clock:     virtual time (model charging, seed 1; "
                + "--clock virtual; --charging model)")).count(), out);
        assertTrue(Files.readString(html).contains("<svg "), "the HTML report was written");
        assertTrue(out.contains("  defer-call iodepth 64 "), out);
        assertTrue(out.contains("  hipri=1 "), out);
        assertTrue(out.contains("  sharded "), out);
        assertTrue(out.contains("tracked-lock mutex"), out);
        assertTrue(out.contains("note: bh at iodepth 64: queues ran [immediate] (no service named bh bound"), out);
        // bh is not bound: seed 002 compared immediate with immediate, so its verdict is "not run", never a match.
        String seed002 = out.substring(out.indexOf("\nseed 002: "), out.indexOf("\nseed 003: "));
        assertTrue(seed002.contains("\n  direction: not run ("), seed002);
        assertTrue(seed002.contains("\n  measured:  not run: bh or defer-call was not bound"), seed002);
        assertTrue(seed002.contains("strategy bh, ran immediate |"), seed002);
        assertTrue(out.contains("\n  seed 002  not run "), out);
        // The heading says what the host's load was, measured, not assumed.
        String heading = out.lines().findFirst().orElseThrow();
        assertTrue(heading.matches("kp:bench seeds: .* host CPUs \\d+; during the run \\d+\\.\\d\\d cores busy on average:"
                + " this JVM \\d+\\.\\d\\d, other processes \\d+\\.\\d\\d \\(/proc/stat\\); load average .*"), heading);
        assertFalse(out.contains("shared, loaded host"), heading);
        assertFalse(out.contains("note: defer-call at"), "the bound test strategy was used: " + out);
        assertTrue(out.contains("\nsummary\n"), out);
        assertTrue(out.endsWith("JSON: " + json.toAbsolutePath() + "\n"), out);

        JsonNode root = new ObjectMapper().readTree(Files.readString(json));
        JsonNode seeds = root.get("seeds");
        assertEquals(5, seeds.size());
        JsonNode load = root.get("host_load");
        assertTrue(load.get("busy_cores").asDouble() > 0, load.toString());
        assertTrue(load.get("own_cores").asDouble() > 0, "the benchmark itself kept a core busy: " + load);
        assertTrue(load.get("other_cores").isNumber(), load.toString());
        assertTrue(load.get("loadavg_1min_start").isNumber(), load.toString());
        assertTrue(seeds.get(2).get("direction_matches").isNull(), seeds.get(2).toString());
        // One round: no spread, nothing unstable; the counts leave 002 (not run) out.
        assertEquals(1, root.get("summary").get("not_run").asInt(), root.get("summary").toString());
        assertEquals(0, root.get("summary").get("unstable").size());
        assertEquals(4, root.get("summary").get("stable").asInt());
        assertEquals("not run", seeds.get(2).get("verdict").asText());
        for (JsonNode s : seeds) {
            if (s.get("id").asText().equals("002")) {
                continue;
            }
            assertTrue(s.get("direction_matches").isBoolean(), s.toString());
            assertEquals(s.get("direction_matches").asBoolean() ? "matches" : "differs", s.get("verdict").asText());
            assertTrue(s.get("published_figures").size() > 0, s.toString());
            assertTrue(s.get("magnitude_ratio").isNumber(), s.toString());
            assertTrue(s.get("within_2x").isBoolean(), s.toString());
            assertFalse(s.get("unstable").asBoolean(), s.toString());
            assertTrue(s.get("effect").get("spread").isNull(), "one round: " + s);
            assertTrue(s.get("sources").asText().startsWith("from the post: "), s.toString());
            assertTrue(s.get("measured_figures").size() > 0, s.toString());
            for (JsonNode p : s.get("points")) {
                assertEquals("0.020s", p.get("params").get("runtime").asText());
                assertTrue(p.get("figures").get("IOPS").asDouble() > 0, "every point completed requests: " + p);
            }
        }
        assertEquals(3, seeds.get(4).get("points").size());
        // 002's interrupts per request come from the device's counters.
        assertTrue(seeds.get(2).get("points").get(0).get("figures").get("irqs/req").isNumber());
        // The vq lock of 001 and the tracked lock of 004 were measured.
        assertTrue(seeds.get(1).get("points").get(0).get("figures").get("acquisitions").asDouble() > 0);
        assertTrue(seeds.get(4).get("points").get(1).get("figures").get("lock-contentions").isNumber());
        assertTrue(registry.list().isEmpty(), "every temporary disk detached: " + registry.list());
    }

    /**
     * Every configuration runs once per round, each round with its own tie-break seed, and under model charging the
     * same command gives the same rounds again. The timeout only guards against a hang.
     */
    @Test
    @Timeout(value = 400, unit = TimeUnit.SECONDS)
    void everyConfigurationRunsOncePerRoundWithItsOwnSeedAndModelChargingRepeatsTheRun() throws Exception {
        String command = "kp:bench seeds --only 003 --runtime 0.04 --rounds 2 --clock virtual --charging model";
        String out = (String) shell.run(command);
        List<String> points = out.lines().filter(l -> l.contains(" | vcpus ")).toList();
        assertEquals(2, points.size(), out);
        for (String p : points) {
            assertTrue(p.contains("runtime 0.040s"), p);
            assertTrue(p.contains(", rounds 2 |"), p);
            java.util.regex.Matcher m = java.util.regex.Pattern
                    .compile("IOPS-rounds-min ([0-9.]+), IOPS-rounds-max ([0-9.]+)").matcher(p);
            assertTrue(m.find(), p);
            assertTrue(Double.parseDouble(m.group(1)) > 0, p);
        }
        // Each round has its own tie-break seed, so the rounds are independent runs of the schedule...
        assertTrue(out.contains("  clock:     virtual time (model charging, seed 1 (1-2, one per round); "), out);
        assertTrue(out.contains("\n  rounds:    effect per round "), out);
        // ... and model charging is deterministic: the same command gives the same rounds again.
        String again = (String) shell.run(command);
        assertEquals(points, again.lines().filter(l -> l.contains(" | vcpus ")).toList());
    }

    /**
     * The runs a bench makes are its plan's, in its order (the remaining-time estimate counts on it), with rounds and
     * with --quick; a --quick report marks its verdicts and leaves out what it did not run.
     */
    @Test
    @Timeout(value = 400, unit = TimeUnit.SECONDS)
    void theRunsAreThePlansAndAQuickRunRunsAndMarksLess(@TempDir Path dir) throws Exception {
        notifiers.add("bh", new EndOfBatchNotifier(), 0, 2);
        for (List<String> args : List.of(List.of("--only", "000,002", "--rounds", "2", "--runtime", "0.02"),
                List.of("--quick", "--runtime", "0.02"))) {
            List<String> all = new ArrayList<>(args);
            all.addAll(List.of("--clock", "virtual", "--charging", "model", "--json", dir.resolve("q.json").toString()));
            SeedsOptions o = SeedsOptions.parse(all);
            java.io.ByteArrayOutputStream lines = new java.io.ByteArrayOutputStream();
            bench.progressOut = new java.io.PrintStream(lines, true, java.nio.charset.StandardCharsets.UTF_8);
            SeedsBench.Report report = bench.run(o);
            List<String> ran = lines.toString(java.nio.charset.StandardCharsets.UTF_8).lines().map(l -> {
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("kp:bench seeds: seed (\\d{3}) (?:point "
                        + "\\d+/\\d+ \\((.*)\\)|(warm-up .*)), elapsed \\d+s, remaining ~\\d+s").matcher(l);
                assertTrue(m.matches(), l);
                return m.group(1) + " " + SeedPlan.variant(m.group(2) != null ? m.group(2) : m.group(3));
            }).toList();
            assertEquals(SeedPlan.of(o, true).stream().map(s -> s.seed() + " " + s.variant()).toList(), ran, "" + args);
            String text = report.format();
            JsonNode root = new ObjectMapper().readTree(Files.readString(dir.resolve("q.json")));
            assertEquals(o.quick(), root.get("quick").asBoolean());
            for (JsonNode s : root.get("seeds")) {
                assertEquals(o.quick(), s.get("quick").asBoolean(), s.toString());
            }
            assertEquals(o.quick(), text.startsWith(SeedsFormat.QUICK_HEADING), text);
            if (o.quick()) {
                assertEquals(5, root.get("seeds").size());
                assertEquals(2, root.get("seeds").get(0).get("points").size(), "000 at 50 us, ioeventfd off");
                assertEquals(2, root.get("seeds").get(4).get("points").size(), "004 yielding and mutex");
                assertTrue(text.contains("sharded not run (--quick)"), text);
                assertFalse(root.get("seeds").get(4).get("measured_figures").has("sharded_iops"), text);
                assertTrue(text.contains("  under-lock exit 50us ioeventfd off "), text);
                assertFalse(text.contains("exit 1us"), text);
                assertFalse(text.contains("ioeventfd on |"), text);
                JsonNode s002 = root.get("seeds").get(2);
                assertEquals(2, s002.get("points").size(), "002 immediate and defer-call at iodepth 64 only");
                assertFalse(s002.get("measured_figures").has("defer_call_vs_immediate_iodepth1_pct"), s002.toString());
                assertFalse(s002.get("measured_figures").has("bh_iops_iodepth64"), s002.toString());
                assertTrue(s002.get("measured").asText().contains(" IOPS at iodepth 64 (bh not run (--quick)), iodepth 1"
                        + " not run (--quick); irqs/req at iodepth 64: immediate "), s002.toString());
                assertTrue(s002.get("direction_matches").isBoolean(), "a verdict at iodepth 64: " + s002);
                assertEquals(5, text.lines().filter(l -> l.startsWith("  direction: ") && l.contains(" (quick) (")).count(),
                        text);
            }
        }
        assertTrue(registry.list().isEmpty(), "every temporary disk detached: " + registry.list());
    }

    /**
     * With both bh and defer-call bound, seed 002 ran what it names and gives a verdict (unstable when its rounds
     * disagree). 20 ms per point, as the other tests here: the verdict's presence is asserted, not its value. The
     * timeout only guards against a hang.
     */
    @Test
    @Timeout(value = 400, unit = TimeUnit.SECONDS)
    void seed002GivesAVerdictOnlyWhenBothStrategiesRan() {
        notifiers.add("bh", new EndOfBatchNotifier(), 0, 2);
        SeedResult r = bench.seed002(20_000_000L);
        assertEquals(List.of(), r.notes());
        assertTrue(r.directionMatches() != null, r.measured());
        assertTrue(List.of("matches", "differs", "unstable").contains(r.verdict()), r.verdict());
        assertFalse(r.measured().startsWith("not run"), r.measured());
        for (SeedResult.Point p : r.points()) {
            assertFalse(p.params().containsKey("ran"), p.toString());
        }
        assertTrue(registry.list().isEmpty(), "every temporary disk detached: " + registry.list());
    }
}
