package io.kickplug.benchmarks.vhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.benchmarks.report.Json;
import io.kickplug.benchmarks.report.Provenance;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class VhostJsonTest {

    static final Provenance PROVENANCE = new Provenance("java -cp benchmarks/target/benchmarks.jar"
            + " io.kickplug.benchmarks.vhost.VhostBench --runs 3 --json 'out file.json'", "0123456789abcdef0123456789abcdef01234567",
            "2026-12-05T10:00:00Z", "AMD EPYC", 2, "0-1", "6.1.0 amd64", "OpenJDK 64-Bit Server VM 17.0.15", 1.5, 0.75,
            0.25);

    private static VhostBench.Point point(double iops, double cpu, long p50) {
        return new VhostBench.Point(iops, cpu, p50, p50 * 2, p50 * 3, 0.5, 0.25);
    }

    /** Every run of every server, its median run (median CPU per I/O, as the table) and the ratios, read back. */
    @Test
    void everyRunTheMedianRunAndTheRatiosReadBack() {
        Map<String, List<VhostBench.Point>> runs = new LinkedHashMap<>();
        runs.put("kickplug", List.of(point(100_000, 3.0, 10_000), point(120_000, 2.0, 9_000),
                point(90_000, 4.0, 11_000)));
        runs.put("qsd", List.of(point(50_000, 6.0, 20_000), point(80_000, 5.0, 18_000), point(60_000, 4.0, 22_000)));
        Map<String, String> options = new LinkedHashMap<>();
        options.put("runs", "3");
        options.put("json", "out file.json");
        String text = VhostJson.write(PROVENANCE, options, "4 KiB random reads", "qemu-storage-daemon version 7.2",
                List.of(new VhostJson.Entry("null", 32, runs)));
        Json.Value root = Json.parse(text, "vhost.json");
        assertEquals("VhostBench", root.get("benchmark").string());
        assertEquals(PROVENANCE, Provenance.of(root.get("provenance")), "provenance reads back whole");
        assertEquals("out file.json", root.get("options").get("json").string());
        assertEquals("qemu-storage-daemon version 7.2", root.get("qsd").string());
        Json.Value p = root.get("points").list().get(0);
        assertEquals("null", p.get("backend").string());
        assertEquals(32, p.get("depth").integer());
        Json.Value kp = p.get("kickplug");
        assertEquals(3, kp.get("runs").list().size());
        assertEquals(120_000, kp.get("runs").list().get(1).get("iops").number());
        assertEquals(11_000, kp.get("runs").list().get(2).get("p50_ns").integer());
        assertEquals(33_000, kp.get("runs").list().get(2).get("p999_ns").integer());
        assertEquals(0.5, kp.get("runs").list().get(0).get("kicks_per_io").number());
        assertEquals(0.25, kp.get("runs").list().get(0).get("waits_per_io").number());
        // Median CPU per I/O: Kickplug's CPU 3, 2, 4 -> run 1 (3.0); QSD's 6, 5, 4 -> run 2 (5.0).
        assertEquals(1, kp.get("median_run").integer());
        assertEquals(100_000, kp.get("median").get("iops").number());
        assertEquals(2, p.get("qsd").get("median_run").integer());
        Json.Value iops = p.get("ratios").get("iops");
        assertEquals(List.of(2.0, 1.5, 1.5), iops.get("runs").list().stream().map(Json.Value::number).toList(),
                "run r of Kickplug over run r of QSD");
        assertEquals(1.5, iops.get("median").number());
        assertEquals(100_000 / 80_000.0, iops.get("of_medians").number(), 1e-12, "the table's ratio");
        Json.Value cpu = p.get("ratios").get("cpu_per_io");
        assertEquals(List.of(0.5, 0.4, 1.0), cpu.get("runs").list().stream().map(Json.Value::number).toList());
        assertEquals(0.5, cpu.get("median").number());
        assertEquals(10_000 / 18_000.0, p.get("ratios").get("p50").get("of_medians").number(), 1e-12);
        assertEquals(2 * 10_000 / (2 * 18_000.0), p.get("ratios").get("p99").get("of_medians").number(), 1e-12);
        assertTrue(p.get("ratios").get("p999").get("runs").list().size() == 3);
    }

    /** A run's regime counters are written with it, in their order; a run without them has no "regime" member. */
    @Test
    void theRegimeCountersOfARunReadBack() {
        Map<String, Double> regime = new LinkedHashMap<>();
        regime.put("device_kicks_per_io", 0.0303);
        regime.put("io_thread_sleeps_per_io", 0.0301);
        regime.put("poll_hits_per_io", 0.0);
        VhostBench.Point withRegime = new VhostBench.Point(1000, 0.7, 100, 200, 300, 0.03, 0.04, regime);
        String text = VhostJson.write(PROVENANCE, Map.of(), "w", null, List.of(new VhostJson.Entry("null", 32,
                Map.of("kickplug", List.of(withRegime, point(1, 1, 1))))));
        List<Json.Value> runs = Json.parse(text, "r.json").get("points").list().get(0).get("kickplug").get("runs").list();
        Json.Value r = runs.get(0).get("regime");
        assertEquals(0.0303, r.get("device_kicks_per_io").number());
        assertEquals(0.0301, r.get("io_thread_sleeps_per_io").number());
        assertEquals(0.0, r.get("poll_hits_per_io").number());
        assertTrue(text.indexOf("device_kicks_per_io") < text.indexOf("poll_hits_per_io"), text);
        assertTrue(!runs.get(1).keys().contains("regime"), "a point measured without the counters");
    }

    /** Without qemu-storage-daemon: Kickplug's runs only, ratios null; a ratio over zero is null, not Infinity. */
    @Test
    void withoutQsdTheRatiosAreNullAndAZeroBaselineWritesNull() {
        String alone = VhostJson.write(PROVENANCE, Map.of(), "w", null,
                List.of(new VhostJson.Entry("file", 1, Map.of("kickplug", List.of(point(1, 1, 1))))));
        Json.Value p = Json.parse(alone, "a.json").get("points").list().get(0);
        assertTrue(p.get("ratios").isNull());
        assertTrue(p.opt("qsd") == null);
        assertTrue(Json.parse(alone, "a.json").get("qsd").isNull());
        Map<String, List<VhostBench.Point>> runs = new LinkedHashMap<>();
        runs.put("kickplug", List.of(point(10, 1, 1), point(20, 1, 1)));
        runs.put("qsd", List.of(point(0, 1, 1), point(10, 1, 1)));
        Json.Value r = Json.parse(VhostJson.write(PROVENANCE, Map.of(), "w", "q",
                List.of(new VhostJson.Entry("null", 1, runs))), "z.json").get("points").list().get(0).get("ratios")
                .get("iops");
        assertTrue(r.get("runs").list().get(0).isNull());
        assertEquals(2.0, r.get("runs").list().get(1).number());
        assertEquals(2.0, r.get("median").number(), "the median of the ratios there are");
        assertEquals(0, Json.parse(VhostJson.write(PROVENANCE, Map.of(), "w", null, List.of()), "e.json")
                .get("points").list().size());
    }

    /**
     * Two launchers in one sitting: the first is "kickplug" with "ratios" (what the figure draws), the second
     * "kickplug-jar" with "ratios_jar", each over the same QSD runs.
     */
    @Test
    void twoLaunchersEachHaveTheirRatiosOverQsd() {
        List<String> launchers = VhostBench.launchers("kickplugd,jar");
        assertEquals(List.of("kickplugd", "jar"), launchers);
        assertEquals("kickplug", VhostBench.kickplugName(launchers, "kickplugd"));
        assertEquals("kickplug-jar", VhostBench.kickplugName(launchers, "jar"));
        assertEquals("kickplug", VhostBench.kickplugName(VhostBench.launchers("jar"), "jar"));
        Map<String, List<VhostBench.Point>> runs = new LinkedHashMap<>();
        runs.put("kickplug", List.of(point(100, 1.0, 1)));
        runs.put("kickplug-jar", List.of(point(50, 4.0, 1)));
        runs.put("qsd", List.of(point(100, 2.0, 1)));
        Json.Value p = Json.parse(VhostJson.write(PROVENANCE, Map.of(), "w", "q",
                List.of(new VhostJson.Entry("null", 64, runs))), "l.json").get("points").list().get(0);
        assertEquals(0.5, p.get("ratios").get("cpu_per_io").get("median").number());
        assertEquals(2.0, p.get("ratios_jar").get("cpu_per_io").get("median").number());
        assertEquals(0.5, p.get("ratios_jar").get("iops").get("of_medians").number());
        assertEquals(4.0, p.get("kickplug-jar").get("median").get("cpu_us_per_io").number());
    }

    @Test
    void aLauncherIsKickplugdOrJarAndNamedOnce() {
        assertEquals(List.of("jar"), VhostBench.launchers(" jar "));
        for (String bad : List.of("java", "kickplugd,kickplugd", "", "jar,")) {
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> VhostBench.launchers(bad), bad);
        }
    }

    @Test
    void medianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        assertEquals(2.5, VhostJson.median(List.of(4.0, 1.0, 3.0, 2.0)));
        assertEquals(3.0, VhostJson.median(List.of(3.0, Double.NaN)));
        assertTrue(Double.isNaN(VhostJson.median(List.of())));
        // The table's median run: of an even count the upper middle, of equal CPU the earlier run.
        assertEquals(1, VhostBench.medianIndex(List.of(point(1, 1, 1), point(2, 2, 1))));
        assertEquals(1, VhostBench.medianIndex(List.of(point(1, 5, 1), point(2, 5, 1), point(3, 5, 1))));
    }

    /** The provenance of this very process: its JVM, its cores, its command line, the work tree's commit. */
    @Test
    void provenanceOfThisProcessReadsTheMachine() {
        Provenance p = Provenance.ofThisProcess(Path.of("."));
        assertEquals(Runtime.getRuntime().availableProcessors(), p.cores());
        assertTrue(p.command().contains("java"), p.command());
        assertTrue(p.jvm().contains(System.getProperty("java.runtime.version")), p.jvm());
        assertTrue(p.gitCommit().matches("[0-9a-f]{40}(-dirty)?|unknown \\(.*\\)"), p.gitCommit());
        assertTrue(p.date().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(Z|[+-]\\d\\d:\\d\\d)"), p.date());
        assertTrue(!p.cpuModel().isBlank() && !p.kernel().isBlank() && !p.cpusAllowed().isBlank(), p.toString());
        assertTrue(p.load1() >= 0, "Linux has /proc/loadavg: " + p.load1());
        assertEquals(p, Provenance.of(Json.parse(p.json(""), "p.json")));
        assertEquals("java -jar 'a b.jar' -c 'kp:bench seeds --json x.json' 'it'\\''s' ''",
                Provenance.shellQuote(List.of("java", "-jar", "a b.jar", "-c", "kp:bench seeds --json x.json", "it's",
                        "")));
    }
}
