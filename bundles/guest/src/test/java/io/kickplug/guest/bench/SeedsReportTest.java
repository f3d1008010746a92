package io.kickplug.guest.bench;

import io.kickplug.guest.engine.Charging;
import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kickplug.api.text.JsonText;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The pure parts of {@code kp:bench seeds}: direction logic, option parsing, the text table, the JSON file. */
class SeedsReportTest {

    @Test
    void ratiosAndPercentagesOverAMissingBaselineAreNaN() {
        assertEquals(2.0, SeedVerdicts.ratio(10, 20));
        assertEquals(-50.0, SeedVerdicts.percent(20, 10), 1e-9);
        assertTrue(Double.isNaN(SeedVerdicts.ratio(0, 20)));
        assertTrue(Double.isNaN(SeedVerdicts.ratio(Double.NaN, 20)));
        assertTrue(Double.isNaN(SeedVerdicts.ratio(10, Double.NaN)));
        assertFalse(SeedVerdicts.increased(0, 20), "no baseline: no verdict in favour");
        assertFalse(SeedVerdicts.decreased(0, 0));
        assertFalse(SeedVerdicts.increased(10, 10), "equal is not a gain");
        assertFalse(SeedVerdicts.decreased(10, 10), "equal is not a reduction");
    }

    @Test
    void seed000IsJudgedAtTheLargestExitCost() {
        TreeMap<Long, Double> ratios = new TreeMap<>(Map.of(1_000L, 0.9, 50_000L, 1.3, 10_000L, 0.95));
        assertTrue(SeedVerdicts.seed000(ratios));
        ratios.put(50_000L, 0.99);
        ratios.put(1_000L, 3.0);
        assertFalse(SeedVerdicts.seed000(ratios));
        ratios.put(50_000L, Double.NaN);
        assertFalse(SeedVerdicts.seed000(ratios));
        assertFalse(SeedVerdicts.seed000(new TreeMap<>()));
    }

    @Test
    void seed001NeedsBothTheMaxHoldAndTheTotalWaitToFall() {
        assertTrue(SeedVerdicts.seed001(3271.81, 219.76, 161165.4, 50245.83), "the published figures");
        assertFalse(SeedVerdicts.seed001(3271.81, 219.76, 100, 200), "wait went up");
        assertFalse(SeedVerdicts.seed001(100, 200, 200, 100), "hold went up");
        assertFalse(SeedVerdicts.seed001(100, 50, 0, 0), "no waiting at all: no evidence");
    }

    @Test
    void seeds002To004AreGainsOfTheNewVariant() {
        assertTrue(SeedVerdicts.seed002(100, 109));
        assertFalse(SeedVerdicts.seed002(109, 100));
        assertTrue(SeedVerdicts.seed003(100, 120));
        assertFalse(SeedVerdicts.seed003(120, 120));
        assertTrue(SeedVerdicts.seed004(254_000, 517_000));
        assertFalse(SeedVerdicts.seed004(517_000, 254_000));
    }

    @Test
    void optionsTakeDecimalSecondsFioTimesAndAJsonPath() {
        assertEquals(SeedsBench.DEFAULT_RUNTIME_NANOS, SeedsOptions.parse(List.of()).runtimeNanos());
        assertEquals(200_000_000L, SeedsOptions.parse(List.of("--runtime", "0.2")).runtimeNanos());
        assertEquals(200_000_000L, SeedsOptions.parse(List.of("--runtime=200ms")).runtimeNanos());
        assertEquals(5_000_000_000L, SeedsOptions.parse(List.of("--runtime", "5")).runtimeNanos());
        assertEquals(Path.of("out/r.json"), SeedsOptions.parse(List.of("--json", "out/r.json")).json());
        assertNull(SeedsOptions.parse(List.of()).json());
        assertEquals("--runtime must be positive and at most 1h: 0", parseError("--runtime", "0"));
        assertEquals("--runtime must be positive and at most 1h: 0.0", parseError("--runtime", "0.0"));
        assertEquals("--runtime must be positive and at most 1h: 2h", parseError("--runtime", "2h"));
        assertTrue(parseError("--runtime", "-1").startsWith("invalid --runtime"), parseError("--runtime", "-1"));
        assertEquals("--json needs a value", parseError("--json"));
        assertEquals("--json needs a file name", parseError("--json", " "));
        assertEquals("--runtime is given twice", parseError("--runtime", "1", "--runtime", "2"));
        assertEquals("unknown option --iodepth (expected --quick, --runtime, --json, --html, --clock, --charging, --seed,"
                + " --only, --rounds or --pin-cpu)", parseError("--iodepth", "4"));
        assertEquals("unexpected argument 'fast' (expected --quick, --runtime S, --json FILE, --html FILE, --clock "
                + "auto|real|virtual, --charging auto|measured|model, --seed N, --only LIST, --rounds N or --pin-cpu "
                + "auto|off|LIST)", parseError("fast"));
        SeedsOptions o = SeedsOptions.parse(List.of("--clock", "virtual", "--charging=model", "--seed",
                "7", "--html", "r.html"));
        assertEquals("virtual", o.clock());
        assertEquals(io.kickplug.guest.engine.Charging.MODEL, o.charging());
        assertEquals(7, o.seed());
        assertEquals(Path.of("r.html"), o.html());
        assertEquals("auto", SeedsOptions.parse(List.of()).clock());
        // The default is each seed's own charging: the model's for all five (004's lock has modelled costs).
        SeedsOptions auto = SeedsOptions.parse(List.of());
        assertNull(auto.charging());
        assertEquals(auto, SeedsOptions.parse(List.of("--charging", "auto")));
        for (String seed : List.of("000", "001", "002", "003", "004")) {
            assertEquals(io.kickplug.guest.engine.Charging.MODEL, auto.chargingOf(seed), seed);
        }
        // Without --runtime a model-charged seed runs 0.1 s a round; with it, what it says.
        assertEquals(3 * SeedsOptions.MODEL_ROUND_NANOS, auto.runtimeOf("004"));
        assertEquals(3_000_000_000L, SeedsOptions.parse(List.of("--runtime", "3")).runtimeOf("004"));
        assertEquals(3_000_000_000L, SeedsOptions.parse(List.of("--charging", "measured")).runtimeOf("004"));
        SeedsOptions measured = SeedsOptions.parse(List.of("--charging", "measured"));
        assertEquals(io.kickplug.guest.engine.Charging.MEASURED, measured.chargingOf("000"));
        assertEquals(io.kickplug.guest.engine.Charging.MODEL, o.chargingOf("004"));
        // The seed's clock: model charging reads no clock, so only 004's measured actors are pinned.
        SeedClock c003 = SeedClock.of(auto, "003", 0.0, "1", 4);
        assertTrue(c003.virtual());
        assertEquals(io.kickplug.guest.engine.Charging.MODEL, c003.charging());
        assertNull(c003.pinCpus());
        assertTrue(c003.describe().contains("model charging") && c003.describe().contains("--charging auto"),
                c003.describe());
        SeedClock c004 = SeedClock.of(measured, "004", 0.0, "1", 8);
        assertEquals(io.kickplug.guest.engine.Charging.MEASURED, c004.charging());
        assertEquals("1", c004.pinCpus(), "measured charging pins its actors");
        assertNull(SeedClock.of(auto, "004", 0.0, "1", 8).pinCpus(), "model charging reads no clock");
        assertTrue(SeedClock.of(measured, "003", 0.0, "1", 4).describe().contains("--charging measured"));
        assertEquals("--clock must be auto, real or virtual: 'fast'", parseError("--clock", "fast"));
        assertEquals("--charging must be auto, measured or model: 'cpu'", parseError("--charging", "cpu"));
        assertEquals("--seed must be an integer: 'x'", parseError("--seed", "x"));
    }

    @Test
    void onlyPicksSeedsByIdOrNumberAndTheProgressCountsTheirPoints() {
        SeedsOptions all = SeedsOptions.parse(List.of());
        assertEquals(java.util.Set.copyOf(SeedsOptions.SEEDS), all.only());
        assertEquals(SeedsBench.TOTAL_POINTS, SeedsBench.points(SeedsOptions.parse(List.of("--rounds", "1"))));
        // Every point runs once per round, but 001's (model charging, deterministic) once.
        assertEquals(3, all.rounds());
        assertEquals((8 + 6 + 2 + 3) * 3 + 2, SeedsBench.points(all));
        SeedsOptions two = SeedsOptions.parse(List.of("--only", "002,4", "--rounds=1"));
        assertEquals(java.util.Set.of("002", "004"), two.only());
        assertTrue(two.runs("002"));
        assertTrue(two.runs("004"));
        assertFalse(two.runs("000"));
        assertEquals(6 + 3, SeedsBench.points(two));
        assertEquals(8 * 5, SeedsBench.points(SeedsOptions.parse(List.of("--only=000", "--rounds", "5"))));
        assertEquals(2, SeedsBench.points(SeedsOptions.parse(List.of("--only=001", "--rounds", "5"))));
        assertEquals("--only: no seed 005 (seeds are 000, 001, 002, 003, 004)", parseError("--only", "5"));
        assertEquals("--only takes seed ids (000-004), comma-separated: '002,'", parseError("--only", "002,"));
        assertEquals("--only takes seed ids (000-004), comma-separated: 'x'", parseError("--only", "x"));
    }

    /** --quick sets the runtime and the rounds that are not given, and the reduced plan; explicit options win. */
    @Test
    void quickSetsTheRuntimeAndRoundsNotGivenAndExplicitOnesWin() {
        SeedsOptions full = SeedsOptions.parse(List.of());
        assertFalse(full.quick());
        assertEquals(SeedsBench.DEFAULT_RUNTIME_NANOS, full.runtimeNanos());
        assertEquals(SeedsOptions.DEFAULT_ROUNDS, full.rounds());
        SeedsOptions quick = SeedsOptions.parse(List.of("--quick"));
        assertTrue(quick.quick());
        assertEquals(SeedsOptions.QUICK_RUNTIME_NANOS, quick.runtimeNanos());
        assertEquals(200_000_000L, SeedsOptions.QUICK_RUNTIME_NANOS);
        assertEquals(2, quick.rounds());
        assertEquals(full.only(), quick.only(), "--quick runs every seed");
        assertEquals(full.clock(), quick.clock());
        assertEquals(full.charging(), quick.charging());
        assertEquals(full.pin(), quick.pin());
        // Explicit options win, wherever they stand.
        SeedsOptions runtime = SeedsOptions.parse(List.of("--runtime", "2", "--quick"));
        assertTrue(runtime.quick());
        assertEquals(2_000_000_000L, runtime.runtimeNanos());
        assertEquals(2, runtime.rounds(), "--quick's rounds where --rounds is not given");
        SeedsOptions rounds = SeedsOptions.parse(List.of("--quick", "--rounds=3", "--only", "002"));
        assertEquals(SeedsOptions.QUICK_RUNTIME_NANOS, rounds.runtimeNanos());
        assertEquals(3, rounds.rounds());
        assertEquals(java.util.Set.of("002"), rounds.only());
        SeedsOptions same = SeedsOptions.parse(List.of("--quick", "--runtime", "3", "--rounds", "3"));
        assertEquals(full.runtimeNanos(), same.runtimeNanos());
        assertEquals(full.rounds(), same.rounds());
        assertTrue(same.quick(), "still the quick points (000 at 50 us, 002 at iodepth 64) and marked quick");
        assertEquals("--quick takes no value: 'false'", parseError("--quick=false"));
        assertEquals("--quick is given twice", parseError("--quick", "--quick"));
        // The points: what the verdicts compare, seed 000 at its verdict's exit with ioeventfd off only, 002
        // immediate and defer-call at iodepth 64, 004 yielding and mutex; each once per round, 001's once.
        assertEquals((2 + 2 + 2 + 2) * 2 + 2, SeedsBench.points(quick));
        assertEquals((2 + 2 + 2 + 2) * 3 + 2, SeedsBench.points(same));
        assertEquals(2 + 2 + 2 + 2 + 2, SeedsBench.points(SeedsOptions.parse(List.of("--quick", "--rounds", "1"))));
        assertEquals(List.of(50_000L), SeedPlan.exits000(quick));
        assertEquals(List.of(false), SeedPlan.ioeventfds000(quick, true));
        assertEquals(List.of(true), SeedPlan.ioeventfds000(quick, false), "real threads without the I/O threads");
        assertEquals(List.of(64), SeedPlan.iodepths002(quick));
        assertEquals(List.of("immediate", "defer-call"), SeedPlan.strategies002(quick));
        assertEquals(List.of(io.kickplug.api.blk.TrackedLockKind.YIELDING, io.kickplug.api.blk.TrackedLockKind.MUTEX),
                SeedPlan.lockKinds004(quick));
        assertEquals(SeedsBench.STRATEGIES, SeedPlan.strategies002(full));
        assertEquals(SeedsBench.LOCK_KINDS, SeedPlan.lockKinds004(full));
        assertEquals(List.of(1_000L, 10_000L, 50_000L), SeedPlan.exits000(full));
        assertEquals(List.of(false, true), SeedPlan.ioeventfds000(full, true));
        assertEquals(List.of(64, 1), SeedPlan.iodepths002(full));
    }

    /** The help's durations are the plans' costs, and the plans have the runs the bench makes. */
    @Test
    void theHelpsDurationsAreComputedFromThePlans() {
        List<SeedPlan.Step> full = SeedPlan.of(SeedsOptions.parse(List.of()), true);
        List<SeedPlan.Step> quick = SeedPlan.of(SeedsOptions.parse(List.of("--quick")), true);
        // Every seed runs under model charging by default: no warm-ups (nothing of the host's code is measured).
        assertEquals(59, full.size(), "59 points, no warm-ups");
        assertEquals(18, quick.size(), "18 point runs (2 rounds), no warm-ups");
        assertTrue(full.stream().noneMatch(SeedPlan.Step::warmUp), "" + full);
        // Measured charging warms up as before: every seed but 001 (always model charging in virtual time).
        List<SeedPlan.Step> measured = SeedPlan.of(SeedsOptions.parse(List.of("--charging", "measured")), true);
        assertEquals(List.of("warm-up immediate iodepth 64"), measured.stream()
                .filter(s -> s.seed().equals("002") && s.warmUp()).map(SeedPlan.Step::variant).toList());
        assertEquals(10, measured.stream().filter(SeedPlan.Step::warmUp).count(), "000 2, 001 2, 002 1, 003 2, 004 3");
        // 21 configurations under model charging, 0.1 s per round (001 once for its three rounds' time).
        assertEquals(SeedsOptions.MODEL_ROUND_NANOS * 63, full.stream().mapToLong(SeedPlan.Step::virtualNanos).sum());
        // Under measured charging each point runs the default 3 s, shared among its rounds; 001 (model charging
        // always, in virtual time) its rounds' 0.1 s each; the warm-ups up to 1 s (001's 0.3 s).
        assertEquals(19 * 3_000_000_000L + 2 * 3 * SeedsOptions.MODEL_ROUND_NANOS + 8 * 1_000_000_000L
                + 2 * 3 * SeedsOptions.MODEL_ROUND_NANOS, measured.stream().mapToLong(SeedPlan.Step::virtualNanos)
                .sum(), "19 configurations x 3 s, 001 0.3 s, 10 warm-ups");
        // 10 configurations x 0.2 s (each round half).
        assertEquals(10 * SeedsOptions.QUICK_RUNTIME_NANOS, quick.stream().mapToLong(SeedPlan.Step::virtualNanos).sum());
        assertEquals(Math.round(SeedCosts.seconds(full) / 60), SeedCosts.DEFAULT_RUN_MINUTES,
                "BenchCommand's @Descriptor states the default run's minutes");
        assertEquals(Math.round(SeedCosts.seconds(quick)), SeedCosts.QUICK_RUN_SECONDS,
                "BenchCommand's @Descriptor states --quick's seconds");
        assertTrue(SeedCosts.seconds(quick) < 180, "--quick takes under 3 minutes: " + SeedCosts.seconds(quick));
        String describe = SeedCosts.describe();
        assertEquals("a default run: 59 points and 0 warm-ups, 6 s of runtime, about "
                + SeedCosts.DEFAULT_RUN_MINUTES + " min; --quick: 18 points and 0 warm-ups, 2 s of runtime, about "
                + SeedCosts.QUICK_RUN_SECONDS + " s (on a 2-core machine shared with builds)",
                describe);
        // A configuration the table does not have costs its seed's mean, never nothing.
        SeedPlan.Step unknown = new SeedPlan.Step("000", "under-lock exit 2us ioeventfd on", 1_000_000_000L);
        assertTrue(SeedCosts.seconds(unknown) > SeedCosts.SETUP_SECONDS, "" + SeedCosts.seconds(unknown));
        for (SeedPlan.Step s : full) {
            String variant = s.warmUp() ? s.variant().substring(SeedPlan.Step.WARM_UP.length()) : s.variant();
            assertTrue(SeedCosts.WALL_PER_RUNTIME_SECOND.containsKey(s.seed() + " " + variant), s.toString());
        }
    }

    @Test
    void roundsAreBoundedIntegers() {
        assertEquals("--rounds must be an integer: 'x'", parseError("--rounds", "x"));
        assertEquals("--rounds must be 1 to 15: 0", parseError("--rounds", "0"));
        assertEquals("--rounds must be 1 to 15: 16", parseError("--rounds", "16"));
        assertEquals(15, SeedsOptions.parse(List.of("--rounds", "15")).rounds());
    }

    @Test
    void pinCpuTakesAutoOffOrACpuList() {
        assertEquals("auto", SeedsOptions.parse(List.of()).pin());
        assertNull(SeedsOptions.parse(List.of("--pin-cpu", "off")).pinCpus());
        assertEquals("2-3", SeedsOptions.parse(List.of("--pin-cpu=2-3")).pin());
        assertEquals("--pin-cpu must be auto, off or a CPU list (1, 2-3): bad CPU 'x' in CPU list 'x'",
                parseError("--pin-cpu", "x"));
        assertEquals("--pin-cpu must be auto, off or a CPU list (1, 2-3): bad CPU range '3-1' in CPU list '3-1'",
                parseError("--pin-cpu", "3-1"));
    }

    @Test
    void theMedianRoundStandsForItsConfigurationWithTheSpreadBesideIt() {
        var r = SeedRounds.of(List.of(point(519_000), point(843_000), point(700_000)));
        assertEquals(700_000, r.median().iops());
        assertEquals(519_000, r.minIops());
        assertEquals(843_000, r.maxIops());
        var f = new java.util.LinkedHashMap<String, Double>();
        r.addTo(f);
        assertEquals(java.util.Map.of("IOPS-rounds-min", 519_000.0, "IOPS-rounds-max", 843_000.0), f);
        assertEquals(List.of("IOPS", "IOPS-rounds-min", "IOPS-rounds-max"), List.copyOf(r.figures().keySet()));
        assertEquals(700_000, r.figures().get("IOPS"));
        // An even count: the lower of the middle two.
        assertEquals(500, SeedRounds.of(List.of(point(900), point(100), point(500), point(600))).median()
                .iops());
        // One round: no spread figures.
        var one = new java.util.LinkedHashMap<String, Double>();
        SeedRounds.of(List.of(point(5))).addTo(one);
        assertTrue(one.isEmpty());
        assertThrows(IllegalArgumentException.class, () -> SeedRounds.of(List.of()));
    }

    private static SeedPoint point(double iops) {
        return new SeedPoint(null, iops, 0, 0, 0, java.util.Set.of(), List.of(), 0, 0);
    }

    private static String parseError(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> SeedsOptions.parse(List.of(args)))
                .getMessage();
    }

    @Test
    void jobFilesAreTimeBasedWithTheSeedsParameters() {
        String text = SeedJobs.jobFile("seed003", "randread", "io_uring", 1, 1, true, 200_000_000L);
        var jobs = io.kickplug.guest.fio.JobFileParser.parse(text);
        assertEquals(1, jobs.size());
        var j = jobs.get(0);
        assertEquals(io.kickplug.guest.fio.RwMode.RANDREAD, j.rw());
        assertEquals(io.kickplug.guest.fio.IoEngine.IO_URING, j.ioengine());
        assertTrue(j.hipri());
        assertEquals(1, j.iodepth());
        assertEquals(4096, j.bsMin());
        assertEquals(200_000_000L, j.runtimeNanos());
        assertTrue(j.timeBased());
        assertNull(j.filename(), "no filename: the disk under test");
        assertEquals(8, io.kickplug.guest.fio.JobFileParser.parse(
                SeedJobs.jobFile("seed002", "randread", "libaio", 64, 8, null, 1_000_000_000L)).size());
    }

    private static SeedResult sample(String id, Boolean matches, double figure) {
        Map<String, String> params = SeedJobs.params(4, 4, 64, "4k", "randread", "libaio", 1, 1, 10_000, 2_000,
                "memory", 3_000_000_000L);
        params.put("kick", "under-lock");
        Map<String, Double> f = new LinkedHashMap<>();
        f.put("IOPS", 12345.4);
        f.put("irqs/req", 0.123456);
        f.put("hold-max-us", figure);
        Map<String, Double> measured = new LinkedHashMap<>();
        measured.put("ratio", figure);
        return new SeedResult(id, "title " + id, "14K -> 34K IOPS", Map.of("ratio", 2.43), "rule " + id,
                List.of(new SeedResult.Point("under-lock", params, f)), "ratio 1.10", measured, matches,
                List.of("a \"quoted\"\nnote\twith\\ escapes")).with(figure / 2.43, "virtual time (x)");
    }

    @Test
    void theTableStatesEveryParameterAndThePublishedBesideTheMeasured() {
        String out = SeedsFormat.format(List.of(sample("000", true, 1.1), sample("004", false, Double.NaN)),
                200_000_000L, HostLoad.unmeasured(2), "/tmp/x.json");
        assertTrue(out.startsWith("kp:bench seeds: the five source experiments, 0.200s per point; host CPUs 2; host load"
                + " not measured (2 cores for up to 8 vCPUs; compare directions, not sizes)\n"), out);
        assertTrue(out.contains("\nseed 000: title 000\n  published: 14K -> 34K IOPS\n  clock:     virtual time (x)\n"),
                out);
        assertTrue(out.contains("  under-lock | vcpus 4, numjobs 4, iodepth 64, bs 4k, rw randread, ioengine libaio,"
                + " queues 1, iothreads 1, exit 10us, inject 2us, backend memory, runtime 3s, kick under-lock"
                + " | IOPS 12345, irqs/req 0.1235, hold-max-us 1.10\n"), out);
        assertTrue(out.contains("  measured:  ratio 1.10\n  direction: matches (rule 000)\n  magnitude: 0.45x the published "
                + "effect, NOT within 2x\n"), out);
        assertTrue(out.contains("hold-max-us n/a"), out);
        assertTrue(out.contains("  direction: DOES NOT match (rule 004)\n"), out);
        assertTrue(out.contains("\nsummary\n  seed 000  matches   0.45x off >2x           ratio 1.10\n"
                + "  seed 004  differs   magnitude n/a           ratio 1.10\n"), out);
        assertTrue(out.endsWith("JSON: /tmp/x.json\n"), out);
        assertEquals("+9.0%", SeedsFormat.percent(9));
        assertEquals("-93.3%", SeedsFormat.percent(-93.28));
        assertEquals("n/a", SeedsFormat.percent(Double.NaN));
        assertEquals("3s", SeedsFormat.seconds(3_000_000_000L));
    }

    /** The heading states the measured load, and the reading it allows follows from the figures. */
    @Test
    void theHeadingSaysWhatTheHostsLoadWasAndANotRunSeedSaysSo() throws Exception {
        String shared = SeedsFormat.format(List.of(sample("002", null, 1.0)), 200_000_000L,
                new HostLoad(2, 1.9, 1.2, 3.5, 3.9), null);
        assertTrue(shared.startsWith("kp:bench seeds: the five source experiments, 0.200s per point; host CPUs 2; during"
                + " the run 1.90 cores busy on average: this JVM 1.20, other processes 0.70 (/proc/stat); load average"
                + " 3.50 -> 3.90 (1 min) (a shared host (other processes used 0.70 cores); 2 cores for up to 8 vCPUs;"
                + " compare directions, not sizes)\n"), shared);
        assertTrue(shared.contains("  direction: not run (rule 002)\n"), shared);
        assertTrue(shared.contains("\n  seed 002  not run   magnitude n/a           ratio 1.10\n"), shared);
        String idle = SeedsFormat.format(List.of(), 1_000_000_000L, new HostLoad(16, 8.1, 8.0, 0.5, 7.0), null);
        assertTrue(idle.contains("other processes 0.10 (/proc/stat); load average 0.50 -> 7.00 (1 min) (no other load"
                + " measured (under 0.25 cores); sizes comparable between runs on this host)\n"), idle);
        JsonNode root = new ObjectMapper().readTree(SeedsJson.write(List.of(sample("002", null, 1.0)), 1, new HostLoad(2,
                1.9, 1.2, 3.5, 3.9), "t"));
        assertTrue(root.get("seeds").get(0).get("direction_matches").isNull());
        assertEquals("not run", root.get("seeds").get(0).get("verdict").asText());
        assertEquals(0.7, root.get("host_load").get("other_cores").asDouble(), 1e-9);
        assertTrue(root.get("host_load").get("shared").asBoolean());
        // A real sample of this host: /proc is there on Linux, and this JVM's own time is counted.
        HostLoad.Sample a = HostLoad.sample();
        long spin = System.nanoTime() + 200_000_000L;
        while (System.nanoTime() < spin) {
            Thread.onSpinWait();
        }
        HostLoad measured = HostLoad.between(a, HostLoad.sample());
        assertTrue(measured.busyCores() > 0 && measured.ownCores() > 0, measured.toString());
        assertTrue(measured.busyCores() <= measured.cpus() + 0.01, measured.toString());
    }

    @Test
    void theJsonFileParsesBackWithEverySeedsFigures() throws Exception {
        String text = SeedsJson.write(List.of(sample("000", true, 1.1), sample("004", false, Double.NaN)),
                200_000_000L, HostLoad.unmeasured(2), "2024-01-01T00:00:00Z");
        JsonNode root = new ObjectMapper().readTree(text);
        assertEquals("kp:bench seeds", root.get("benchmark").asText());
        assertEquals(0.2, root.get("runtime_s").asDouble(), 1e-12);
        assertEquals(2, root.get("host_cpus").asInt());
        JsonNode seeds = root.get("seeds");
        assertEquals(2, seeds.size());
        JsonNode s0 = seeds.get(0);
        assertEquals("000", s0.get("id").asText());
        assertTrue(s0.get("direction_matches").isBoolean());
        assertTrue(s0.get("direction_matches").asBoolean());
        assertFalse(seeds.get(1).get("direction_matches").asBoolean());
        assertEquals("matches", s0.get("verdict").asText());
        assertEquals("differs", seeds.get(1).get("verdict").asText());
        assertEquals(2.43, s0.get("published_figures").get("ratio").asDouble(), 1e-12);
        assertEquals(1.1, s0.get("measured_figures").get("ratio").asDouble(), 1e-12);
        assertTrue(seeds.get(1).get("measured_figures").get("ratio").isNull(), "NaN is written as null");
        assertEquals("a \"quoted\"\nnote\twith\\ escapes", s0.get("notes").get(0).asText());
        JsonNode point = s0.get("points").get(0);
        assertEquals("under-lock", point.get("label").asText());
        assertEquals("4", point.get("params").get("vcpus").asText());
        assertEquals("under-lock", point.get("params").get("kick").asText());
        assertEquals(12345.4, point.get("figures").get("IOPS").asDouble(), 1e-9);
        assertEquals(0.123456, point.get("figures").get("irqs/req").asDouble(), 1e-12);
        assertEquals(3, point.get("figures").size());
        assertEquals(1.1 / 2.43, s0.get("magnitude_ratio").asDouble(), 1e-12);
        assertFalse(s0.get("within_2x").asBoolean(), "0.45x is off by more than 2x");
        assertTrue(seeds.get(1).get("magnitude_ratio").isNull());
        assertTrue(seeds.get(1).get("within_2x").isNull());
        assertEquals("virtual time (x)", s0.get("clock").asText());
        // No seeds at all is still a document.
        assertEquals(0, new ObjectMapper().readTree(SeedsJson.write(List.of(), 1, HostLoad.unmeasured(1), "t"))
                .get("seeds").size());
    }

    /** Within 2x: same direction and between half and twice the published effect, bounds included. */
    @Test
    void withinTwoXNeedsTheDirectionAndAFactorOfTwo() {
        assertTrue(sample("000", true, 2.43 * 2).withinTwoX());
        assertTrue(sample("000", true, 2.43 / 2).withinTwoX());
        assertFalse(sample("000", true, 2.43 * 2.01).withinTwoX());
        assertFalse(sample("000", true, -2.43).withinTwoX(), "the opposite direction is never within 2x");
        assertNull(sample("000", null, 2.43).withinTwoX(), "not run");
    }

    /** The HTML page is one self-contained document: inline SVG bars, no script, no external reference. */
    @Test
    void theHtmlReportIsSelfContainedWithBarsPerSeed() {
        String html = SeedsHtml.write(List.of(sample("000", true, 1.1), sample("001", true, -80)), 200_000_000L,
                new HostLoad(2, 1.9, 1.2, 3.5, 3.9), "t<0>");
        assertTrue(html.startsWith("<!DOCTYPE html>"), html);
        assertTrue(html.endsWith("</html>\n"), html);
        assertEquals(4, html.split("<svg ", -1).length - 1, "published vs measured and IOPS bars per seed");
        assertFalse(html.contains("<script"), html);
        assertFalse(html.contains("src="), html);
        assertFalse(html.replace("http://www.w3.org/2000/svg", "").contains("http"), "nothing fetched");
        assertTrue(html.contains("Started t&lt;0&gt;"), "text is escaped");
        assertTrue(html.contains(">1.43</text>"), "the published gain (2.43x - 1): " + html);
        assertTrue(html.contains(">-80.00</text>") || html.contains(">-80.0</text>") || html.contains("-80.00"), html);
        assertTrue(html.contains("<td class=\"ok\">matches</td>"), html);
    }

    /** A --quick report marks every verdict quick: the text's heading and lines, the JSON, the HTML page. */
    @Test
    void aQuickReportMarksEveryVerdictQuickInTextJsonAndHtml() throws Exception {
        List<SeedResult> seeds = List.of(sample("000", true, 2.0), sample("004", false, Double.NaN),
                sample("002", null, 1.0));
        String text = SeedsFormat.format(seeds, 300_000_000L, HostLoad.unmeasured(2), "/tmp/q.json", true);
        assertTrue(text.startsWith(SeedsFormat.QUICK_HEADING + "\nkp:bench seeds --quick: the five source experiments,"
                + " 0.300s per point; "), text);
        assertTrue(text.contains("\n  direction: matches (quick) (rule 000)\n  magnitude: 0.82x the published effect,"
                + " within 2x (quick)\n"), text);
        assertTrue(text.contains("\n  direction: DOES NOT match (quick) (rule 004)\n  magnitude: n/a (quick)\n"), text);
        assertTrue(text.contains("\n  direction: not run (quick) (rule 002)\n"), text);
        assertTrue(text.contains("\nsummary\n  seed 000  matches (quick)   0.82x within 2x         ratio 1.10\n"
                + "  seed 004  differs (quick)   magnitude n/a           ratio 1.10\n"
                + "  seed 002  not run (quick)   magnitude n/a           ratio 1.10\n"), text);
        String body = text.substring(SeedsFormat.QUICK_HEADING.length());
        assertEquals(3 * 3 + 1, body.split("\\(quick\\)", -1).length - 1,
                "direction, magnitude and summary per seed, and the summary's counts");
        String full = SeedsFormat.format(seeds, 300_000_000L, HostLoad.unmeasured(2), "/tmp/q.json");
        assertFalse(full.contains("quick"), full);
        assertEquals(full, SeedsFormat.format(seeds, 300_000_000L, HostLoad.unmeasured(2), "/tmp/q.json", false));

        JsonNode quick = new ObjectMapper().readTree(SeedsJson.write(seeds, 300_000_000L, HostLoad.unmeasured(2), "t",
                true));
        assertTrue(quick.get("quick").asBoolean(), "at the top");
        java.util.Iterator<String> names = quick.fieldNames();
        assertEquals(List.of("benchmark", "quick"), List.of(names.next(), names.next()), "second, where it is seen");
        for (JsonNode s : quick.get("seeds")) {
            assertTrue(s.get("quick").isBoolean() && s.get("quick").asBoolean(), "beside every verdict: " + s);
        }
        assertEquals("matches", quick.get("seeds").get(0).get("verdict").asText(), "the verdict's values stay");
        JsonNode notQuick = new ObjectMapper().readTree(SeedsJson.write(seeds, 3_000_000_000L, HostLoad.unmeasured(2),
                "t"));
        assertTrue(notQuick.get("quick").isBoolean() && !notQuick.get("quick").asBoolean(), "a full run says so");
        for (JsonNode s : notQuick.get("seeds")) {
            assertFalse(s.get("quick").asBoolean(), s.toString());
        }

        String html = SeedsHtml.write(seeds, 300_000_000L, HostLoad.unmeasured(2), "t", true);
        assertTrue(html.contains("<title>kp:bench seeds --quick</title>"), html);
        assertTrue(html.contains("<h1>kp:bench seeds --quick</h1>\n<p class=\"quick\">QUICK RUN (--quick): "), html);
        assertTrue(html.contains("<td class=\"ok\">matches (quick)</td>"), html);
        assertTrue(html.contains("<td class=\"ok\">yes (quick)</td>"), "within 2x: " + html);
        assertTrue(html.contains("<td class=\"bad\">differs (quick)</td>"), html);
        assertTrue(html.contains("<span class=\"ok\">matches (quick)</span>"), html);
        assertTrue(html.contains("<b>magnitude:</b> 0.82x the published effect, within 2x (quick)"), html);
        String fullHtml = SeedsHtml.write(seeds, 300_000_000L, HostLoad.unmeasured(2), "t");
        assertFalse(fullHtml.contains("quick"), fullHtml);
    }

    @Test
    void jsonNumbersAndStrings() {
        assertEquals("null", SeedsJson.number(Double.POSITIVE_INFINITY));
        assertEquals("12", SeedsJson.number(12.0));
        assertEquals("0.5", SeedsJson.number(0.5));
        assertEquals("\"\\u0001\"", JsonText.quote("\u0001"));
        assertEquals("null", JsonText.quote(null));
    }
}
