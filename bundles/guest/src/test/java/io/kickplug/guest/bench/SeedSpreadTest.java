package io.kickplug.guest.bench;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A seed's rounds and its verdict: the median round's effect is the measured one; rounds that disagree on the
 * direction, or fall on both sides of an edge of the 2x band, make the seed unstable, neither a match nor a miss, in
 * the text, the JSON and the HTML report.
 */
class SeedSpreadTest {

    /** Seed 004's published gain: 517k / 254k - 1. */
    private static final double GAIN_004 = 517.0 / 254.0 - 1;

    private static SeedResult seed(String id, List<Double> rounds) {
        return new SeedResult(id, "title " + id, "p", Map.of(), "rule " + id, List.of(), "m", Map.of(), true,
                List.of()).with(Double.NaN, "virtual time (x)").withEffectRounds(rounds);
    }

    @Test
    void theMedianRoundIsTheMeasuredEffectAndTheRangeIsBesideIt() {
        SeedResult s = seed("004", List.of(0.74, 1.74, 0.98));
        SeedSpread sp = s.spread();
        assertEquals(0.74, sp.min());
        assertEquals(0.98, sp.median());
        assertEquals(1.74, sp.max());
        assertEquals(0.98 / GAIN_004, s.magnitudeRatio(), 1e-12, "the median round's effect over the published");
        assertEquals(0.74 / GAIN_004, sp.ratioMin(), 1e-12);
        assertEquals(1.74 / GAIN_004, sp.ratioMax(), 1e-12);
        assertFalse(s.unstable(), "0.71x to 1.68x: every round within 2x");
        assertEquals("matches", s.verdict());
        assertTrue(s.withinTwoX());
        assertEquals(2.5, SeedSpread.of(List.of(4.0, 1.0, 3.0, 2.0), 1).median(), "an even count: the middle two's mean");
        assertFalse(SeedSpread.of(List.of(1.0), 1).measured(), "one round: no spread");
        assertFalse(SeedSpread.of(List.of(1.0, Double.NaN), 1).measured(), "a round that is not a number is left out");
    }

    @Test
    void aDirectionThatFlipsBetweenRoundsIsUnstableNotAMatch() {
        // Seed 002: +9% published; two rounds gain, one loses.
        SeedResult s = seed("002", List.of(14.0, -3.0, 8.0));
        assertTrue(s.spread().directionFlips());
        assertTrue(s.unstable());
        assertEquals("unstable", s.verdict());
        assertTrue(s.directionMatches(), "the median round's direction is kept beside the verdict");
        assertNull(s.withinTwoX(), "no magnitude verdict either");
        assertEquals("the direction flips between rounds (2 of 3 the published way)", s.spread().reason());
        // A single round or agreeing rounds: the verdict as before.
        assertEquals("matches", seed("002", List.of(14.0)).verdict());
        SeedResult wrong = seed("002", List.of(-14.0, -3.0, -8.0));
        assertFalse(wrong.unstable(), "every round the other way: a stable miss");
        assertEquals("differs", wrong.verdict());
        assertFalse(wrong.withinTwoX());
    }

    @Test
    void roundsOnBothSidesOfAnEdgeOfTheBandAreUnstable() {
        // 003: +20% published, band +10% to +40%.
        SeedResult edge = seed("003", List.of(38.0, 41.0, 39.0));
        assertTrue(edge.spread().spansBand(), "two within, one above");
        assertFalse(edge.spread().directionFlips());
        assertEquals("unstable", edge.verdict());
        assertEquals("the rounds span an edge of the 2x band (1.90x to 2.05x, 2 of 3 within)", edge.spread().reason());
        assertTrue(seed("003", List.of(5.0, 50.0, 60.0)).unstable(), "below and above the band, none within");
        assertFalse(seed("003", List.of(41.0, 60.0, 45.0)).unstable(), "all above: a stable 'not within 2x'");
        assertFalse(seed("003", List.of(10.0, 40.0)).unstable(), "the bounds are within");
        // A negative published effect (001's -93%): the band is -46.5% to -186%.
        SeedSpread neg = SeedSpread.of(List.of(-50.0, -98.0, -90.0), -93);
        assertFalse(neg.unstable());
        assertEquals(50 / 93.0, neg.ratioMin(), 1e-12);
        assertEquals(98 / 93.0, neg.ratioMax(), 1e-12);
        assertTrue(SeedSpread.of(List.of(-40.0, -98.0), -93).spansBand());
    }

    @Test
    void theReportShowsEachRoundTheRangeAndCountsUnstableSeedsApart() throws Exception {
        List<SeedResult> seeds = List.of(seed("002", List.of(14.0, -3.0, 8.0)), seed("003", List.of(36.0, 39.0, 35.0)),
                seed("004", List.of(0.7, 0.98, 1.2)), seed("000", List.of(0.1, 0.2, 0.15)));
        String text = SeedsFormat.format(seeds, 1_000_000_000L, HostLoad.unmeasured(2), null);
        assertTrue(text.contains("\n  rounds:    effect per round +14.0%, -3.0%, +8.0% (min -3.0%, median +8.0%, max"
                + " +14.0%), published +9.0%\n"), text);
        assertTrue(text.contains("\n  direction: UNSTABLE: the direction flips between rounds (2 of 3 the published way)"
                + " (rule 002)\n  magnitude: UNSTABLE, the direction flips between rounds (2 of 3 the published way):"
                + " 0.89x the published effect (median of 3 rounds), no verdict\n"), text);
        assertTrue(text.contains("\n  direction: matches in 3 of 3 rounds (rule 003)\n  magnitude: 1.80x the published"
                + " effect (median of 3 rounds; rounds 1.75x to 1.95x), within 2x\n"), text);
        assertTrue(text.contains("\n  seed 002  unstable  -0.33x-1.56x unstable"), text);
        // Each seed says which figures came from its post and which from the model.
        assertTrue(text.contains("\n  sources:   from the post: randread 4k iodepth 64, 4 IOThreads, 8 virtqueues;"
                + " modelled, not in the post: 8 vCPUs and numjobs 8"), text);
        assertTrue(text.contains("modelled, not in the post: exit 50 us"), text);
        assertTrue(text.contains("\n  directions: 3 of 3 stable seeds match; within 2x: 2 of 3; unstable: 1 (002);"
                + " not run: 0\n"), text);

        JsonNode root = new ObjectMapper().readTree(SeedsJson.write(seeds, 1_000_000_000L, HostLoad.unmeasured(2),
                "t"));
        JsonNode summary = root.get("summary");
        assertEquals(3, summary.get("stable").asInt());
        assertEquals(3, summary.get("directions_match").asInt());
        assertEquals(2, summary.get("within_2x").asInt());
        assertEquals("002", summary.get("unstable").get(0).asText());
        JsonNode s002 = root.get("seeds").get(0);
        assertEquals("unstable", s002.get("verdict").asText());
        assertTrue(s002.get("unstable").asBoolean());
        assertTrue(s002.get("within_2x").isNull());
        assertTrue(s002.get("unstable_reason").asText().startsWith("the direction flips"));
        JsonNode spread = s002.get("effect").get("spread");
        assertEquals(3, spread.get("rounds").asInt());
        assertEquals(-3.0, spread.get("min").asDouble());
        assertEquals(8.0, spread.get("median").asDouble());
        assertEquals(14.0, spread.get("max").asDouble());
        assertEquals(2, spread.get("rounds_matching").asInt());
        assertTrue(spread.get("direction_flips").asBoolean());
        assertEquals(8.0, s002.get("effect").get("measured").asDouble(), 1e-12);
        assertTrue(s002.get("sources").asText().startsWith("from the post: randread 4k iodepth 64 (and 1), numjobs 8,"
                + " 8 vCPUs, one IOThread"), s002.toString());
        JsonNode s003 = root.get("seeds").get(1);
        assertFalse(s003.get("unstable").asBoolean());
        assertTrue(s003.get("unstable_reason").isNull());
        assertEquals("matches", s003.get("verdict").asText());
        assertTrue(new ObjectMapper().readTree(SeedsJson.write(List.of(seed("001", List.of())), 1,
                HostLoad.unmeasured(2), "t")).get("seeds").get(0).get("effect").get("spread").isNull(), "no rounds");

        String html = SeedsHtml.write(seeds, 1_000_000_000L, HostLoad.unmeasured(2), "t");
        assertTrue(html.contains("<td class=\"uns\">unstable</td>"), html);
        assertTrue(html.contains("<td>-0.33x to 1.56x (3 rounds)</td>"), html);
        assertTrue(html.contains("<g class=\"whisker\" stroke=\"#102a43\"><title>rounds: -3.00 to 14.00</title>"), html);
        assertTrue(html.contains("<p>directions: 3 of 3 stable seeds match; within 2x: 2 of 3; unstable: 1 (002);"
                + " not run: 0</p>"), html);
    }

    /** Rounds alternate their order (A B C, C B A, ...), and the plan the progress line follows does too. */
    @Test
    void everySecondRoundRunsTheConfigurationsInReverse() {
        List<String> ran = new ArrayList<>();
        Map<String, SeedRounds> rounds = SeedRounds.interleave(3, List.of("a", "b", "c"), (k, r) -> {
            ran.add(k + r.number());
            return new SeedPoint(null, r.number(), 0, 0, 0, java.util.Set.of(), List.of(), 0, 0);
        });
        assertEquals(List.of("a1", "b1", "c1", "c2", "b2", "a2", "a3", "b3", "c3"), ran);
        assertEquals(List.of(1.0, 2.0, 3.0), rounds.get("c").iops(), "each configuration's rounds in round order");
        assertEquals(" round 2/3", new SeedRounds.Round(2, 3).tag());
        assertEquals("", new SeedRounds.Round(1, 1).tag());
        // Measured charging, which warms up first (model charging, the default, does not).
        SeedsOptions o = SeedsOptions.parse(List.of("--only", "004", "--quick", "--rounds", "3", "--charging",
                "measured"));
        assertEquals(List.of("warm-up yielding", "warm-up mutex", "yielding", "mutex", "mutex", "yielding", "yielding",
                "mutex"), SeedPlan.of(o, true).stream().map(SeedPlan.Step::variant).toList());
    }
}
