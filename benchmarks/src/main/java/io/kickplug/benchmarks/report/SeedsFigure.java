package io.kickplug.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The figures of a {@code kp:bench seeds --json} result. {@link #effects}: one panel per seed with the published
 * effect beside the measured one, in the measure the seed's magnitude ratio uses, the band within a factor of 2 of
 * the published effect shaded, and each round's effect as a dot with the rounds' range (min to max) when the seed ran
 * rounds. {@link #points}: every measured point's IOPS, the median round as a bar and the rounds' range as a
 * whisker.
 */
final class SeedsFigure {

    static final double WIDTH = 980;
    static final double MARGIN = 20;
    static final double GAP = 16;
    /** The effect panels' plot height; the panels start below the subtitle, however many lines it has. */
    static final double PLOT_HEIGHT = 240;
    private static final String PUBLISHED = "#9e9e9e";
    private static final String MEASURED = "#3a6ea5";
    private static final String POINT_BAR = "#9dbcdc";
    private static final String ROUND = "#102a43";
    private static final String BAND = "#dcefd6";
    private static final String OK = "#2e7d32";
    /** How far beyond the span of zero, the band and the bars the axis follows a round (see {@link #panel}). */
    static final double OUTLIER_REACH = 0.6;
    private static final String BAD = "#b03030";

    private SeedsFigure() {
    }

    private static final String UNSTABLE = "#b26a00";

    /**
     * A seed's effect as the result file gives it.
     *
     * @param rounds the effect within each round; empty in a file written before rounds were recorded
     * @param unstable whether the rounds disagreed on the verdict ({@code "unstable"}); false in a file without it
     * @param medianOfRounds whether {@code measured} is the median round's effect ({@code effect.spread} present) rather
     *     than the effect of the configurations' median rounds (older files)
     */
    record Effect(String id, String title, String measure, String unit, double published, double measured,
            List<Double> rounds, String verdict, double magnitude, Boolean within, boolean unstable,
            boolean medianOfRounds, boolean directionFlips) {

        static Effect of(Json.Value seed) {
            Json.Value e = seed.get("effect");
            List<Double> rounds = new ArrayList<>();
            Json.Value list = e.opt("rounds");
            if (list != null && !list.isNull()) {
                for (Json.Value r : list.list()) {
                    rounds.add(r.number());
                }
            }
            Json.Value unstable = seed.opt("unstable");
            Json.Value spread = e.opt("spread");
            return new Effect(seed.get("id").string(), seed.get("title").string(), e.get("measure").string(),
                    e.get("unit").string(), e.get("published").number(), e.get("measured").number(), rounds,
                    seed.get("verdict").string(), seed.get("magnitude_ratio").number(), seed.get("within_2x").bool(),
                    unstable != null && !unstable.isNull() && unstable.bool(), spread != null && !spread.isNull(),
                    spread != null && !spread.isNull() && spread.opt("direction_flips") != null
                            && Boolean.TRUE.equals(spread.get("direction_flips").bool()));
        }

        /** The rounds' magnitude ratios, lowest and highest (NaN without two finite rounds). */
        double[] ratioRange() {
            List<Double> finite = rounds.stream().filter(Double::isFinite).toList();
            if (finite.size() < 2 || !(published != 0)) {
                return new double[] {Double.NaN, Double.NaN};
            }
            double lo = finite.stream().mapToDouble(v -> v / published).min().orElseThrow();
            double hi = finite.stream().mapToDouble(v -> v / published).max().orElseThrow();
            return new double[] {lo, hi};
        }

        /** The band: from half to twice the published effect (same sign). */
        double bandLow() {
            return Math.min(published / 2, published * 2);
        }

        double bandHigh() {
            return Math.max(published / 2, published * 2);
        }

        String format(double v) {
            if (!Double.isFinite(v)) {
                return "n/a";
            }
            return unit.equals("percent") ? String.format(Locale.ROOT, "%+.1f%%", v)
                    : String.format(Locale.ROOT, "%+.2f", v);
        }
    }

    /** The effects figure of {@code result} ({@code "benchmark": "kp:bench seeds"}). */
    static String effects(Json.Value result, String resultFile) {
        Provenance p = Provenance.of(result.get("provenance"));
        List<Effect> seeds = new ArrayList<>();
        for (Json.Value s : result.get("seeds").list()) {
            seeds.add(Effect.of(s));
        }
        Svg svg = new Svg();
        svg.text(MARGIN, 28, "kp:bench seeds: the published effect of each source document beside the measured one",
                "start", 16, "#111111", "font-weight=\"bold\"");
        double y = 48;
        boolean medians = seeds.stream().anyMatch(Effect::medianOfRounds);
        String sub = "Grey: published. Blue: measured, " + (medians ? "the median round's effect, each round's effect"
                + " taken from its configurations' runs side by side (what the verdict reads)"
                : "the effect of each configuration's median round (what the verdict reads)")
                + ". Green band: within 2x of the published effect (half to twice, same sign)."
                + (seeds.stream().anyMatch(s -> s.rounds().size() > 1) ? " Dots: the effect within each round (a"
                        + " round far beyond the axis: a triangle at its edge with its value); whisker: the rounds'"
                        + " minimum to maximum, the error bar of the measured effect." : "")
                + (seeds.stream().anyMatch(Effect::unstable) ? " Unstable (orange): the rounds disagree on the"
                        + " verdict (the direction flips, or they fall on both sides of an edge of the band)." : "")
                + " Each panel has its own unit: " + Json.number(result.get("runtime_s").number()) + " s per point, "
                + load(result) + ".";
        for (String line : Svg.wrap(sub, 155)) {
            svg.text(MARGIN, y, line, "start", 11, "#444444", "");
            y += 15;
        }
        double panelTop = y + 10;
        double plotBottom = panelTop + 64 + PLOT_HEIGHT;
        double panelWidth = seeds.isEmpty() ? 0 : (WIDTH - 2 * MARGIN - GAP * (seeds.size() - 1)) / seeds.size();
        for (int i = 0; i < seeds.size(); i++) {
            panel(svg, seeds.get(i), MARGIN + i * (panelWidth + GAP), panelWidth, panelTop, plotBottom);
        }
        if (seeds.isEmpty()) {
            svg.text(MARGIN, panelTop + 20, "no simulated seeds in this result", "start", 12, "#555555", "");
        }
        double end = Svg.caption(svg, MARGIN, plotBottom + 130, WIDTH - 2 * MARGIN, p, resultFile);
        return svg.document(WIDTH, end + 8, "kp:bench seeds: published vs measured effect per seed");
    }

    private static void panel(Svg svg, Effect s, double x, double width, double top, double plotBottom) {
        double plotTop = plotBottom - PLOT_HEIGHT;
        svg.text(x, top + 10, "seed " + s.id(), "start", 13, "#111111", "font-weight=\"bold\"");
        double ty = top + 24;
        for (String line : first(Svg.wrap(s.title(), (int) (width / 5.6)), 3)) {
            svg.text(x, ty, line, "start", 10, "#333333", "");
            ty += 12;
        }
        double left = x + 40;
        double right = x + width - 4;
        // The axis covers zero, the band and both bars, and the rounds up to 60% of that span beyond it: a round
        // further out is an arrow at the edge with its value, so one wild round does not flatten the band.
        double min = Math.min(0, Math.min(s.bandLow(), s.published()));
        double max = Math.max(0, Math.max(s.bandHigh(), s.published()));
        if (Double.isFinite(s.measured())) {
            min = Math.min(min, s.measured());
            max = Math.max(max, s.measured());
        }
        double reach = (max - min) * OUTLIER_REACH;
        double lowest = min - reach;
        double highest = max + reach;
        for (double v : s.rounds()) {
            if (Double.isFinite(v)) {
                min = Math.min(min, Math.max(v, lowest));
                max = Math.max(max, Math.min(v, highest));
            }
        }
        Scale scale = Scale.covering(min, max, 5, plotBottom, plotTop);
        for (double t : scale.ticks()) {
            double y = scale.at(t);
            svg.line(left, y, right, y, "#ececec", 1, null, null);
            svg.text(left - 5, y + 4, scale.label(t), "end", 10, "#444444", "");
        }
        if (Double.isFinite(s.published())) {
            svg.rect(left, scale.at(s.bandHigh()), right - left, scale.at(s.bandLow()) - scale.at(s.bandHigh()), BAND,
                    null, "seed" + s.id() + "-band", "within 2x: " + s.format(s.bandLow()) + " to "
                            + s.format(s.bandHigh()));
        }
        double zero = scale.at(0);
        double slot = (right - left) / 2;
        double barWidth = Math.min(44, slot * 0.6);
        double[] centres = {left + slot * 0.5, left + slot * 1.5};
        double[] values = {s.published(), s.measured()};
        String[] colours = {PUBLISHED, MEASURED};
        String[] names = {"published", "measured"};
        for (int b = 0; b < 2; b++) {
            double v = values[b];
            if (!Double.isFinite(v)) {
                svg.text(centres[b], zero - 6, "n/a", "middle", 11, "#555555", "");
                continue;
            }
            double y = scale.at(v);
            svg.rect(centres[b] - barWidth / 2, y, barWidth, zero - y, colours[b], null, "seed" + s.id() + "-" + names[b],
                    names[b] + ": " + s.format(v));
        }
        rounds(svg, s, scale, centres[1], barWidth);
        svg.line(left, zero, right, zero, "#333333", 1, null, null);
        for (int b = 0; b < 2; b++) {
            svg.text(centres[b], plotBottom + 14, names[b], "middle", 10, "#333333", "");
            svg.text(centres[b], plotBottom + 27, s.format(values[b]), "middle", 11, "#111111", "font-weight=\"bold\"");
        }
        double my = plotBottom + 44;
        for (String line : first(Svg.wrap(s.measure(), (int) (width / 5.4)), 3)) {
            svg.text(x, my, line, "start", 10, "#555555", "font-style=\"italic\"");
            my += 12;
        }
        my = plotBottom + 86;
        // An unstable seed whose rounds all point the published way: its direction holds, its magnitude does not.
        boolean directionHolds = s.unstable() && !s.directionFlips() && s.medianOfRounds();
        String direction = directionHolds ? "direction: matches in every round" : s.unstable() && s.directionFlips()
                ? "direction: flips between rounds" : "direction: " + s.verdict();
        svg.text(x, my, direction, "start", 11, directionHolds ? OK : s.unstable() ? UNSTABLE
                : s.verdict().equals("matches") ? OK : s.verdict().equals("differs") ? BAD : "#555555", "");
        double[] range = s.ratioRange();
        String within = s.unstable() ? String.format(Locale.ROOT, "unstable: rounds %.2fx to %.2fx", range[0], range[1])
                : s.within() == null ? "magnitude n/a" : String.format(Locale.ROOT, "magnitude %.2fx: %s",
                        s.magnitude(), s.within() ? "within 2x" : "not within 2x");
        svg.text(x, my + 14, within, "start", 11, s.unstable() ? UNSTABLE : s.within() == null ? "#555555"
                : s.within() ? OK : BAD, "");
        if (!s.unstable() && Double.isFinite(range[0])) {
            svg.text(x, my + 28, String.format(Locale.ROOT, "rounds %.2fx to %.2fx", range[0], range[1]), "start", 10,
                    "#444444", "");
        }
    }

    /**
     * Each round's effect as a dot beside the others, and a whisker from the lowest to the highest; a round beyond the
     * axis is a triangle at its edge, pointing out, with its value.
     */
    private static void rounds(Svg svg, Effect s, Scale scale, double cx, double barWidth) {
        List<Double> finite = s.rounds().stream().filter(Double::isFinite).toList();
        if (finite.size() < 2) {
            return;
        }
        double lo = finite.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
        double hi = finite.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
        double y1 = scale.at(Math.max(lo, scale.lo()));
        double y2 = scale.at(Math.min(hi, scale.hi()));
        svg.line(cx, y1, cx, y2, ROUND, 1.2, null, "seed" + s.id() + "-whisker");
        if (lo >= scale.lo()) {
            svg.line(cx - 6, y1, cx + 6, y1, ROUND, 1.2, null, null);
        }
        if (hi <= scale.hi()) {
            svg.line(cx - 6, y2, cx + 6, y2, ROUND, 1.2, null, null);
        }
        int n = s.rounds().size();
        for (int r = 0; r < n; r++) {
            double v = s.rounds().get(r);
            if (!Double.isFinite(v)) {
                continue;
            }
            double dx = (r - (n - 1) / 2.0) * Math.min(8, barWidth / Math.max(1, n));
            String id = "seed" + s.id() + "-round" + (r + 1);
            String tip = "round " + (r + 1) + ": " + s.format(v);
            if (v > scale.hi() || v < scale.lo()) {
                boolean up = v > scale.hi();
                double edge = scale.at(up ? scale.hi() : scale.lo());
                double tipY = edge + (up ? -1 : 1) * 2;
                double baseY = edge + (up ? 1 : -1) * 7;
                svg.polygon(new double[] {cx + dx, tipY, cx + dx - 5, baseY, cx + dx + 5, baseY}, ROUND, id, tip);
                svg.text(cx + dx + 7, up ? edge + 8 : edge - 2, s.format(v), "start", 10, ROUND, "");
            } else {
                svg.circle(cx + dx, scale.at(v), 3, ROUND, id, tip);
            }
        }
    }

    /** The points figure: per seed, each point's median-round IOPS as a bar and the rounds' range as a whisker. */
    static String points(Json.Value result, String resultFile) {
        Provenance p = Provenance.of(result.get("provenance"));
        Svg svg = new Svg();
        svg.text(MARGIN, 28, "kp:bench seeds: IOPS of every measured point", "start", 16, "#111111",
                "font-weight=\"bold\"");
        svg.text(MARGIN, 48, "Bar: the median round's IOPS. Whisker: the lowest to the highest round, where the point"
                + " ran in rounds. Each seed has its own scale.", "start", 11, "#444444", "");
        double labelRight = MARGIN + 280;
        double barLeft = labelRight + 8;
        double barRight = WIDTH - MARGIN - 60;
        double y = 72;
        double row = 17;
        for (Json.Value seed : result.get("seeds").list()) {
            String id = seed.get("id").string();
            svg.text(MARGIN, y + 12, "seed " + id + ": " + seed.get("title").string(), "start", 12, "#111111",
                    "font-weight=\"bold\"");
            y += 20;
            List<Json.Value> pts = seed.get("points").list();
            double max = 0;
            for (Json.Value pt : pts) {
                Json.Value f = pt.get("figures");
                max = Math.max(max, finiteOr0(f.get("IOPS").number()));
                Json.Value hi = f.opt("IOPS-rounds-max");
                if (hi != null) {
                    max = Math.max(max, finiteOr0(hi.number()));
                }
            }
            Scale scale = Scale.covering(0, max, 5, barLeft, barRight);
            for (double t : scale.ticks()) {
                svg.line(scale.at(t), y, scale.at(t), y + row * pts.size(), "#ececec", 1, null, null);
            }
            for (int i = 0; i < pts.size(); i++) {
                Json.Value pt = pts.get(i);
                Json.Value f = pt.get("figures");
                String label = pt.get("label").string();
                double cy = y + row * i + row / 2;
                svg.text(labelRight, cy + 4, label, "end", 11, "#222222", "");
                double iops = f.get("IOPS").number();
                String pid = "seed" + id + "-point" + (i + 1);
                double end = barLeft;
                if (Double.isFinite(iops)) {
                    end = scale.at(iops);
                    svg.rect(barLeft, cy - row * 0.35, end - barLeft, row * 0.7, POINT_BAR, null, pid + "-bar",
                            label + ": " + Figures.count(iops) + " IOPS");
                }
                Json.Value lo = f.opt("IOPS-rounds-min");
                Json.Value hi = f.opt("IOPS-rounds-max");
                if (lo != null && hi != null && Double.isFinite(lo.number()) && Double.isFinite(hi.number())) {
                    double x1 = scale.at(lo.number());
                    double x2 = scale.at(hi.number());
                    svg.line(x1, cy, x2, cy, ROUND, 1.2, null, pid + "-whisker");
                    svg.line(x1, cy - 4, x1, cy + 4, ROUND, 1.2, null, null);
                    svg.line(x2, cy - 4, x2, cy + 4, ROUND, 1.2, null, null);
                    end = Math.max(end, x2);
                }
                svg.text(end + 5, cy + 4, Double.isFinite(iops) ? Figures.count(iops) : "n/a", "start", 10, "#333333",
                        "");
            }
            y += row * pts.size();
            for (double t : scale.ticks()) {
                svg.text(scale.at(t), y + 12, Figures.count(t), "middle", 9, "#666666", "");
            }
            y += 24;
        }
        double end = Svg.caption(svg, MARGIN, y + 4, WIDTH - 2 * MARGIN, p, resultFile);
        return svg.document(WIDTH, end + 8, "kp:bench seeds: IOPS per point with the rounds' range");
    }

    private static double finiteOr0(double v) {
        return Double.isFinite(v) ? v : 0;
    }

    private static List<String> first(List<String> lines, int n) {
        if (lines.size() <= n) {
            return lines;
        }
        List<String> out = new ArrayList<>(lines.subList(0, n));
        out.set(n - 1, out.get(n - 1) + " ...");
        return out;
    }

    /** The host's load during the run, from the file's host_load, as a phrase. */
    private static String load(Json.Value result) {
        Json.Value l = result.opt("host_load");
        if (l == null || l.get("busy_cores").isNull()) {
            return "host load not measured";
        }
        return String.format(Locale.ROOT, "%.2f cores busy on average during the run, %.2f of them other processes",
                l.get("busy_cores").number(), l.get("other_cores").number());
    }
}
