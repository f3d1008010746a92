package io.kickplug.guest.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The text report of {@code kp:bench seeds}: per seed a heading, the published figure, one line per measured
 * point stating every parameter it ran with and what it measured, the measured figure beside the published
 * one, and whether the direction matches.
 */
public final class SeedsFormat {

    private SeedsFormat() {
    }

    /** What a {@code --quick} report says first: its verdicts are a first look, not the full run's. */
    static final String QUICK_HEADING = "QUICK RUN (--quick): a first look, fewer and shorter points than the full"
            + " run; every verdict below is marked (quick) and is not the full run's; run kp:bench seeds without"
            + " --quick for those";

    /** The report of a full run with the host's measured load in its heading. */
    public static String format(List<SeedResult> seeds, long runtimeNanos, HostLoad load, String jsonPath) {
        return format(seeds, runtimeNanos, load, jsonPath, false);
    }

    /**
     * The report with the host's measured load in its heading.
     *
     * @param quick whether the run was {@code --quick}: the heading says so first, and every verdict (direction,
     *     magnitude, summary) is marked "(quick)"
     */
    public static String format(List<SeedResult> seeds, long runtimeNanos, HostLoad load, String jsonPath,
            boolean quick) {
        StringBuilder out = new StringBuilder();
        if (quick) {
            out.append(QUICK_HEADING).append('\n');
        }
        String mark = quick ? " (quick)" : "";
        out.append(String.format(Locale.ROOT, "kp:bench seeds%s: the five source experiments, %s per point; %s%n",
                quick ? " --quick" : "", seconds(runtimeNanos), load.describe()));
        for (SeedResult s : seeds) {
            out.append(String.format(Locale.ROOT, "%nseed %s: %s%n", s.id(), s.title()));
            out.append("  published: ").append(s.published()).append('\n');
            out.append("  clock:     ").append(s.clock()).append('\n');
            if (SeedEffects.sources(s.id()) != null) {
                out.append("  sources:   ").append(SeedEffects.sources(s.id())).append('\n');
            }
            int width = s.points().stream().mapToInt(p -> p.label().length()).max().orElse(0);
            for (SeedResult.Point p : s.points()) {
                out.append(String.format(Locale.ROOT, "  %-" + Math.max(1, width) + "s | %s | %s%n", p.label(),
                        params(p.params()), figures(p.figures())));
            }
            out.append("  measured:  ").append(s.measured()).append('\n');
            String rounds = rounds(s);
            if (!rounds.isEmpty()) {
                out.append("  rounds:    ").append(rounds).append('\n');
            }
            out.append("  direction: ").append(direction(s)).append(mark).append(" (").append(s.rule()).append(")\n");
            out.append("  magnitude: ").append(magnitude(s)).append(mark).append('\n');
            for (String note : s.notes()) {
                out.append("  note: ").append(note).append('\n');
            }
        }
        out.append(String.format(Locale.ROOT, "%nsummary%n"));
        for (SeedResult s : seeds) {
            out.append(String.format(Locale.ROOT, "  seed %s  %-" + (8 + mark.length()) + "s  %-22s  %s%n", s.id(),
                    s.verdict() + mark, magnitudeShort(s), s.measured()));
        }
        out.append("  ").append(counts(seeds)).append(mark).append('\n');
        if (jsonPath != null) {
            out.append("JSON: ").append(jsonPath).append('\n');
        }
        return out.toString();
    }

    /**
     * "1.23x the published effect, within 2x", with the rounds' range when the seed ran rounds ("1.23x the published
     * effect (median of 3 rounds; rounds 0.90x to 1.60x), within 2x"); "UNSTABLE: ..." when the rounds disagree;
     * "n/a" when not measurable.
     */
    static String magnitude(SeedResult s) {
        SeedSpread spread = s.spread();
        String rounds = !spread.measured() ? "" : String.format(Locale.ROOT, " (median of %d rounds; rounds %.2fx to"
                + " %.2fx)", spread.rounds().size(), spread.ratioMin(), spread.ratioMax());
        if (s.unstable()) {
            return String.format(Locale.ROOT, "UNSTABLE, %s: %.2fx the published effect (median of %d rounds), no"
                    + " verdict", spread.reason(), s.magnitudeRatio(), spread.rounds().size());
        }
        Boolean within = s.withinTwoX();
        if (within == null) {
            return "n/a";
        }
        return String.format(Locale.ROOT, "%.2fx the published effect%s, %s", s.magnitudeRatio(), rounds,
                within ? "within 2x" : "NOT within 2x");
    }

    static String magnitudeShort(SeedResult s) {
        if (s.unstable()) {
            SeedSpread spread = s.spread();
            return String.format(Locale.ROOT, "%.2fx-%.2fx unstable", spread.ratioMin(), spread.ratioMax());
        }
        Boolean within = s.withinTwoX();
        return within == null ? "magnitude n/a" : String.format(Locale.ROOT, "%.2fx %s", s.magnitudeRatio(),
                within ? "within 2x" : "off >2x");
    }

    /** "matches", "DOES NOT match", "not run", or "UNSTABLE: the direction flips between rounds (...)". */
    static String direction(SeedResult s) {
        if (s.directionMatches() == null) {
            return "not run";
        }
        if (s.unstable() && s.spread().directionFlips()) {
            return "UNSTABLE: " + s.spread().reason();
        }
        String d = s.directionMatches() ? "matches" : "DOES NOT match";
        return s.spread().measured() ? d + " in " + (s.directionMatches() ? s.spread().matching()
                : s.spread().rounds().size() - s.spread().matching()) + " of " + s.spread().rounds().size() + " rounds"
                : d;
    }

    /**
     * The effect round by round and its min, median and max ("effect per round +0.74, +0.98, +1.74 (min +0.74, median
     * +0.98, max +1.74), published +1.04"); "" without rounds.
     */
    static String rounds(SeedResult s) {
        SeedSpread spread = s.spread();
        if (!spread.measured()) {
            return "";
        }
        StringJoiner each = new StringJoiner(", ");
        spread.rounds().forEach(r -> each.add(effect(s.id(), r)));
        return String.format(Locale.ROOT, "effect per round %s (min %s, median %s, max %s), published %s", each,
                effect(s.id(), spread.min()), effect(s.id(), spread.median()), effect(s.id(), spread.max()),
                effect(s.id(), spread.published()));
    }

    /** An effect in its seed's unit ({@link SeedEffects#unit}): "+9.0%" or "+1.04". */
    static String effect(String id, double v) {
        if (!Double.isFinite(v)) {
            return "n/a";
        }
        return SeedEffects.PERCENT.equals(SeedEffects.unit(id)) ? percent(v) : String.format(Locale.ROOT, "%+.2f", v);
    }

    /**
     * The summary's counts: "directions: 4 of 4 stable seeds match; within 2x: 3 of 4; unstable: 1 (002); not run: 0",
     * an unstable seed counted in neither of the first two.
     */
    static String counts(List<SeedResult> seeds) {
        List<SeedResult> ran = seeds.stream().filter(s -> s.directionMatches() != null).toList();
        List<SeedResult> stable = ran.stream().filter(s -> !s.unstable()).toList();
        long directions = stable.stream().filter(SeedResult::directionMatches).count();
        long within = stable.stream().filter(s -> Boolean.TRUE.equals(s.withinTwoX())).count();
        List<String> unstable = ran.stream().filter(SeedResult::unstable).map(SeedResult::id).toList();
        return String.format(Locale.ROOT, "directions: %d of %d stable seeds match; within 2x: %d of %d; unstable: %d%s;"
                + " not run: %d", directions, stable.size(), within, stable.size(), unstable.size(),
                unstable.isEmpty() ? "" : " (" + String.join(", ", unstable) + ")", seeds.size() - ran.size());
    }

    /** "vcpus 4, numjobs 4, iodepth 64, ...". */
    static String params(Map<String, String> params) {
        StringJoiner j = new StringJoiner(", ");
        params.forEach((k, v) -> j.add(k + " " + v));
        return j.toString();
    }

    /** "IOPS 12345, irqs/req 0.0123, hold-max-us 12.34": IOPS whole, per-request figures to 4 places. */
    static String figures(Map<String, Double> figures) {
        StringJoiner j = new StringJoiner(", ");
        figures.forEach((k, v) -> j.add(k + " " + figure(k, v)));
        return j.toString();
    }

    static String figure(String name, double value) {
        if (Double.isNaN(value)) {
            return "n/a";
        }
        if (name.equals("IOPS") || name.equals("contentions") || name.equals("requests") || name.equals("long-slices")) {
            return String.format(Locale.ROOT, "%.0f", value);
        }
        if (name.endsWith("/req")) {
            return String.format(Locale.ROOT, "%.4f", value);
        }
        return String.format(Locale.ROOT, "%.2f", value);
    }

    /** "3s", "0.200s". */
    static String seconds(long nanos) {
        return nanos % 1_000_000_000L == 0 ? nanos / 1_000_000_000L + "s"
                : String.format(Locale.ROOT, "%.3fs", nanos / 1e9);
    }

    /** "+9.0%", "-57.3%", "n/a". */
    static String percent(double p) {
        return Double.isNaN(p) ? "n/a" : String.format(Locale.ROOT, "%+.1f%%", p);
    }

    /** "2.43", "n/a". */
    static String ratio(double r) {
        return Double.isNaN(r) ? "n/a" : String.format(Locale.ROOT, "%.2f", r);
    }

    /**
     * Seed 004's figures (simulated and real guest alike): the three kinds' IOPS and both ratios to yielding; without
     * sharded's when {@code sharded} is NaN (not run: {@code --quick}).
     */
    static Map<String, Double> seed004Figures(double yielding, double mutex, double sharded) {
        Map<String, Double> figures = new LinkedHashMap<>();
        figures.put("yielding_iops", yielding);
        figures.put("mutex_iops", mutex);
        if (!Double.isNaN(sharded)) {
            figures.put("sharded_iops", sharded);
        }
        figures.put("mutex_vs_yielding_ratio", SeedVerdicts.ratio(yielding, mutex));
        if (!Double.isNaN(sharded)) {
            figures.put("sharded_vs_yielding_ratio", SeedVerdicts.ratio(yielding, sharded));
        }
        return figures;
    }

    /** Seed 004's measured line: "yielding Y -> mutex M IOPS, ratio R (published 2.04); sharded S IOPS, ratio R'". */
    static String seed004Line(double yielding, double mutex, double sharded) {
        String line = String.format(Locale.ROOT, "yielding %.0f -> mutex %.0f IOPS, ratio %s (published 2.04); ",
                yielding, mutex, ratio(SeedVerdicts.ratio(yielding, mutex)));
        return line + (Double.isNaN(sharded) ? "sharded not run (--quick)" : String.format(Locale.ROOT,
                "sharded %.0f IOPS, ratio %s", sharded, ratio(SeedVerdicts.ratio(yielding, sharded))));
    }
}
