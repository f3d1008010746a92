package io.kickplug.guest.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What {@code kp:bench seeds --json} adds for the documentation's figures: the provenance (command line, commit, date,
 * machine) and each seed's effect, published and measured in one measure and round by round.
 */
class SeedsProvenanceTest {

    private static final Provenance PROVENANCE = new Provenance("java -jar distribution/target/kickplug.jar -c"
            + " 'kp:bench seeds --json docs/results/seeds.json'", "kp:bench seeds --json docs/results/seeds.json",
            "0123456789abcdef0123456789abcdef01234567-dirty", "2026-12-05T10:00:00Z", "AMD EPYC", 2, "0-1",
            "6.1.0 amd64", "OpenJDK 64-Bit Server VM 17.0.15", 1.5, 0.75, Double.NaN);

    private static SeedResult seed(String id, double magnitude, List<Double> rounds) {
        return new SeedResult(id, "t", "p", Map.of(), "r", List.of(), "m", Map.of(), true, List.of())
                .with(magnitude, "virtual time (x)").withEffectRounds(rounds);
    }

    @Test
    void theJsonFileSaysWhereItCameFrom() throws Exception {
        JsonNode root = new ObjectMapper().readTree(SeedsJson.write(List.of(), 1_000_000_000L, HostLoad.unmeasured(2),
                "t", PROVENANCE));
        JsonNode p = root.get("provenance");
        assertEquals(PROVENANCE.command(), p.get("command").asText());
        assertEquals("kp:bench seeds --json docs/results/seeds.json", p.get("gogo_command").asText());
        assertEquals("0123456789abcdef0123456789abcdef01234567-dirty", p.get("git_commit").asText());
        assertEquals("2026-12-05T10:00:00Z", p.get("date").asText());
        JsonNode m = p.get("machine");
        assertEquals("AMD EPYC", m.get("cpu_model").asText());
        assertEquals(2, m.get("cores").asInt());
        assertEquals("0-1", m.get("cpus_allowed").asText());
        assertEquals("6.1.0 amd64", m.get("kernel").asText());
        assertEquals("OpenJDK 64-Bit Server VM 17.0.15", m.get("jvm").asText());
        assertEquals(1.5, m.get("loadavg_start").get("1min").asDouble());
        assertEquals(0.75, m.get("loadavg_start").get("5min").asDouble());
        assertTrue(m.get("loadavg_start").get("15min").isNull(), "not read: null");
        // The existing members stay where the tests and readers expect them.
        assertEquals("kp:bench seeds", root.get("benchmark").asText());
        assertEquals(1, root.get("runtime_s").asInt());
        assertFalse(new ObjectMapper().readTree(SeedsJson.write(List.of(), 1, HostLoad.unmeasured(2), "t"))
                .has("provenance"), "without provenance the member is left out");
    }

    /** The effect: published and measured in the measure of the magnitude ratio, and each round's. */
    @Test
    void eachSeedsEffectIsPublishedMeasuredAndPerRound() throws Exception {
        JsonNode seeds = new ObjectMapper().readTree(SeedsJson.write(List.of(seed("000", 0.5, List.of(0.6, 0.7, 0.8)),
                seed("001", 1.0, List.of()), seed("003", Double.NaN, List.of(Double.NaN, 4.0))), 1,
                HostLoad.unmeasured(2), "t", PROVENANCE)).get("seeds");
        JsonNode e0 = seeds.get(0).get("effect");
        assertEquals("IOPS gain outside-lock over under-lock (ratio - 1)", e0.get("measure").asText());
        assertEquals("gain", e0.get("unit").asText());
        assertEquals(34.0 / 14.0 - 1, e0.get("published").asDouble(), 1e-12);
        assertEquals(0.7, e0.get("measured").asDouble(), 1e-12, "with rounds, the median round's effect");
        assertEquals(List.of(0.6, 0.7, 0.8), List.of(e0.get("rounds").get(0).asDouble(), e0.get("rounds").get(1)
                .asDouble(), e0.get("rounds").get(2).asDouble()));
        JsonNode e1 = seeds.get(1).get("effect");
        assertEquals("percent", e1.get("unit").asText());
        assertEquals(-93, e1.get("published").asDouble());
        assertEquals(-93, e1.get("measured").asDouble());
        assertEquals(0, e1.get("rounds").size());
        JsonNode e3 = seeds.get(2).get("effect");
        assertTrue(e3.get("measured").isNull(), "not measurable: null");
        assertTrue(e3.get("rounds").get(0).isNull());
    }

    /** Round r of one configuration against round r of the other: they ran one after the other. */
    @Test
    void theEffectOfARoundPairsTheConfigurationsOfThatRound() {
        SeedRounds a = SeedRounds.of(List.of(point(100), point(300), point(200)));
        SeedRounds b = SeedRounds.of(List.of(point(110), point(600), point(100)));
        assertEquals(List.of(100.0, 300.0, 200.0), a.iops(), "in the order the rounds ran, not sorted");
        assertEquals(List.of(10.0, 100.0, -50.0), SeedRounds.perRound(a, b, SeedVerdicts::percent).stream()
                .map(v -> Math.rint(v * 1e9) / 1e9).toList());
        assertEquals(List.of(), SeedRounds.perRound(SeedRounds.of(List.of(point(1))), SeedRounds.of(List.of(point(2))),
                SeedVerdicts::percent), "one round: no spread to show");
    }

    @Test
    void theGogoCommandIsQuotedToBeTypedAgain() {
        assertEquals("kp:bench seeds --json docs/results/seeds.json",
                BenchCommand.command("seeds", "--json", "docs/results/seeds.json"));
        assertEquals("kp:bench seeds --json 'my results.json' --only 000,002",
                BenchCommand.command("seeds", "--json", "my results.json", "--only", "000,002"));
    }

    /** This process: its cores and JVM; the commit is only known in a built bundle (bnd stamps it). */
    @Test
    void theProvenanceOfThisProcess() throws Exception {
        Provenance p = Provenance.now("kp:bench seeds");
        assertEquals(Runtime.getRuntime().availableProcessors(), p.cores());
        assertTrue(p.command().contains("java"), p.command());
        assertTrue(p.jvm().endsWith(System.getProperty("java.runtime.version")), p.jvm());
        assertTrue(p.gitCommit().matches("[0-9a-f]{40}(-dirty)?|unknown \\(.*\\)"), p.gitCommit());
        assertTrue(p.load1() >= 0, "Linux has /proc/loadavg");
        JsonNode m = new ObjectMapper().readTree(p.json("")).get("machine");
        assertEquals(p.cpuModel(), m.get("cpu_model").asText());
    }

    private static SeedPoint point(double iops) {
        return new SeedPoint(null, iops, 0, 0, 0, java.util.Set.of(), List.of(), 0, 0);
    }
}
