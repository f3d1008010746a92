package io.kickplug.guest.bench;

import io.kickplug.api.text.JsonText;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The JSON result file of {@code kp:bench seeds}: where it came from ({@code provenance}: command line, git commit,
 * date, machine), the run's settings, then per seed its parameters (per point), published figures, measured
 * figures, {@code direction_matches}, and its {@code effect} (published and measured in one measure, and within
 * each round). Numbers that are not finite (a ratio over a zero baseline) are written as {@code null}.
 * Hand-written: the guest bundle has no JSON library at run time. {@code scripts/figures.sh} draws
 * {@code docs/figures/} from such a file in {@code docs/results/}.
 */
public final class SeedsJson {

    private SeedsJson() {
    }

    /**
     * @param runtimeNanos the runtime of each measured point
     * @param load the host's processors and measured load ({@code host_load}: busy, own and other cores, load
     *     averages; a figure not measured, as in {@link HostLoad#unmeasured}, is written as null)
     */
    public static String write(List<SeedResult> seeds, long runtimeNanos, HostLoad load, String startedAt) {
        return write(seeds, runtimeNanos, load, startedAt, null, false);
    }

    /**
     * @param provenance where the run came from, or null to leave the member out
     * @see #write(List, long, HostLoad, String)
     */
    public static String write(List<SeedResult> seeds, long runtimeNanos, HostLoad load, String startedAt,
            Provenance provenance) {
        return write(seeds, runtimeNanos, load, startedAt, provenance, false);
    }

    /** @see #write(List, long, HostLoad, String, Provenance, boolean) */
    public static String write(List<SeedResult> seeds, long runtimeNanos, HostLoad load, String startedAt,
            boolean quick) {
        return write(seeds, runtimeNanos, load, startedAt, null, quick);
    }

    /**
     * @param provenance where the run came from, or null to leave the member out
     * @param quick whether the run was {@code --quick}: {@code "quick"} at the top and beside every seed's verdict
     *     (false in a full run, so a reader can rely on the member)
     * @see #write(List, long, HostLoad, String)
     */
    public static String write(List<SeedResult> seeds, long runtimeNanos, HostLoad load, String startedAt,
            Provenance provenance, boolean quick) {
        StringBuilder out = new StringBuilder();
        out.append("{\n  \"benchmark\": \"kp:bench seeds\",\n");
        out.append("  \"quick\": ").append(quick).append(",\n");
        if (provenance != null) {
            out.append("  \"provenance\": ").append(provenance.json("  ")).append(",\n");
        }
        out.append("  \"started\": ").append(JsonText.quote(startedAt)).append(",\n");
        out.append("  \"runtime_s\": ").append(number(runtimeNanos / 1e9)).append(",\n");
        out.append("  \"host_cpus\": ").append(load.cpus()).append(",\n");
        out.append("  \"host_load\": {\"busy_cores\": ").append(number(load.busyCores()))
                .append(", \"own_cores\": ").append(number(load.ownCores()))
                .append(", \"other_cores\": ").append(number(load.otherCores()))
                .append(", \"loadavg_1min_start\": ").append(number(load.loadAvgStart()))
                .append(", \"loadavg_1min_end\": ").append(number(load.loadAvgEnd()))
                .append(", \"shared\": ").append(load.shared()).append("},\n");
        out.append("  \"summary\": ").append(summary(seeds)).append(",\n");
        out.append("  \"seeds\": [");
        for (int i = 0; i < seeds.size(); i++) {
            SeedResult s = seeds.get(i);
            out.append(i == 0 ? "\n" : ",\n");
            out.append("    {\n");
            out.append("      \"id\": ").append(JsonText.quote(s.id())).append(",\n");
            out.append("      \"title\": ").append(JsonText.quote(s.title())).append(",\n");
            out.append("      \"published\": ").append(JsonText.quote(s.published())).append(",\n");
            out.append("      \"published_figures\": ").append(numbers(s.publishedFigures())).append(",\n");
            out.append("      \"measured\": ").append(JsonText.quote(s.measured())).append(",\n");
            out.append("      \"measured_figures\": ").append(numbers(s.measuredFigures())).append(",\n");
            out.append("      \"rule\": ").append(JsonText.quote(s.rule())).append(",\n");
            out.append("      \"direction_matches\": ").append(s.directionMatches()).append(",\n"); // null: not run
            out.append("      \"verdict\": ").append(JsonText.quote(s.verdict())).append(",\n");
            out.append("      \"quick\": ").append(quick).append(",\n");
            out.append("      \"magnitude_ratio\": ").append(number(s.magnitudeRatio())).append(",\n");
            out.append("      \"within_2x\": ").append(s.withinTwoX()).append(",\n"); // null: not measurable, unstable
            out.append("      \"unstable\": ").append(s.unstable()).append(",\n");
            out.append("      \"unstable_reason\": ").append(s.unstable() ? JsonText.quote(s.spread().reason()) : "null")
                    .append(",\n");
            out.append("      \"clock\": ").append(JsonText.quote(s.clock())).append(",\n");
            out.append("      \"sources\": ").append(JsonText.quote(SeedEffects.sources(s.id()))).append(",\n");
            out.append("      \"effect\": ").append(effect(s)).append(",\n");
            out.append("      ");
            notesAndPoints(out, s.notes(), s.points(), "      ", SeedsJson::strings);
            out.append('\n');
            out.append("    }");
        }
        out.append(seeds.isEmpty() ? "]\n}\n" : "\n  ]\n}\n");
        return out.toString();
    }

    /**
     * Appends a seed's {@code "notes"} and {@code "points"} members (the text after them is the caller's), each point
     * on its own line indented two past {@code indent}, its parameters written by {@code params}.
     */
    static void notesAndPoints(StringBuilder out, List<String> notes, List<SeedResult.Point> points, String indent,
            Function<Map<String, String>, String> params) {
        out.append("\"notes\": [");
        for (int n = 0; n < notes.size(); n++) {
            out.append(n == 0 ? "" : ", ").append(JsonText.quote(notes.get(n)));
        }
        out.append("],\n").append(indent).append("\"points\": [");
        for (int p = 0; p < points.size(); p++) {
            SeedResult.Point pt = points.get(p);
            out.append(p == 0 ? "\n" : ",\n").append(indent);
            out.append("  {\"label\": ").append(JsonText.quote(pt.label()));
            out.append(", \"params\": ").append(params.apply(pt.params()));
            out.append(", \"figures\": ").append(numbers(pt.figures())).append('}');
        }
        out.append(points.isEmpty() ? "]" : "\n" + indent + "]");
    }

    /**
     * The seed's effect ({@link SeedEffects}): what it measures, its unit, the published and the measured value, and
     * the effect within each round ({@code []} without rounds).
     */
    static String effect(SeedResult s) {
        StringBuilder out = new StringBuilder("{\"measure\": ").append(JsonText.quote(SeedEffects.measure(s.id())))
                .append(", \"unit\": ").append(JsonText.quote(SeedEffects.unit(s.id())))
                .append(", \"published\": ").append(number(SeedEffects.published(s.id())))
                .append(", \"measured\": ").append(number(SeedEffects.measured(s)))
                .append(", \"rounds\": [");
        for (int r = 0; r < s.effectRounds().size(); r++) {
            out.append(r == 0 ? "" : ", ").append(number(s.effectRounds().get(r)));
        }
        out.append("], \"spread\": ");
        SeedSpread spread = s.spread();
        if (!spread.measured()) {
            return out.append("null}").toString();
        }
        return out.append("{\"rounds\": ").append(spread.rounds().size())
                .append(", \"min\": ").append(number(spread.min()))
                .append(", \"median\": ").append(number(spread.median()))
                .append(", \"max\": ").append(number(spread.max()))
                .append(", \"ratio_min\": ").append(number(spread.ratioMin()))
                .append(", \"ratio_max\": ").append(number(spread.ratioMax()))
                .append(", \"rounds_matching\": ").append(spread.matching())
                .append(", \"rounds_within_2x\": ").append(spread.within())
                .append(", \"direction_flips\": ").append(spread.directionFlips())
                .append(", \"spans_2x_band\": ").append(spread.spansBand()).append("}}").toString();
    }

    /**
     * The run's counts: stable seeds whose direction matches and that are within 2x, the unstable ones (counted in
     * neither), and those not run.
     */
    static String summary(List<SeedResult> seeds) {
        List<SeedResult> ran = seeds.stream().filter(s -> s.directionMatches() != null).toList();
        List<SeedResult> stable = ran.stream().filter(s -> !s.unstable()).toList();
        StringBuilder unstable = new StringBuilder("[");
        ran.stream().filter(SeedResult::unstable).forEach(s -> unstable.append(unstable.length() == 1 ? "" : ", ")
                .append(JsonText.quote(s.id())));
        return "{\"stable\": " + stable.size() + ", \"directions_match\": "
                + stable.stream().filter(SeedResult::directionMatches).count() + ", \"within_2x\": "
                + stable.stream().filter(s -> Boolean.TRUE.equals(s.withinTwoX())).count() + ", \"unstable\": "
                + unstable.append(']') + ", \"not_run\": " + (seeds.size() - ran.size()) + "}";
    }

    /** A JSON object of named numbers (null for NaN and the infinities). */
    static String numbers(Map<String, Double> map) {
        StringBuilder out = new StringBuilder("{");
        boolean first = true;
        for (Map.Entry<String, Double> e : map.entrySet()) {
            out.append(first ? "" : ", ").append(JsonText.quote(e.getKey())).append(": ").append(number(e.getValue()));
            first = false;
        }
        return out.append('}').toString();
    }

    private static String strings(Map<String, String> map) {
        StringBuilder out = new StringBuilder("{");
        boolean first = true;
        for (Map.Entry<String, String> e : map.entrySet()) {
            out.append(first ? "" : ", ").append(JsonText.quote(e.getKey())).append(": ")
                    .append(JsonText.quote(e.getValue()));
            first = false;
        }
        return out.append('}').toString();
    }

    /** A JSON number, or null for NaN and the infinities (JSON has neither). */
    static String number(Double value) {
        if (value == null || value.isNaN() || value.isInfinite()) {
            return "null";
        }
        double v = value;
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return Double.toString(v);
    }
}
