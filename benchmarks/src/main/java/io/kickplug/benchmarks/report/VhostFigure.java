package io.kickplug.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The figure of a {@code VhostBench --json} result: two panels, IOPS and CPU per I/O as Kickplug / QSD ratios per
 * disk backend and queue depth; each run's ratio a dot, the median of the runs' ratios a bar, the 1.0x line (parity)
 * marked; under each bar the two servers' median runs in absolute terms.
 */
final class VhostFigure {

    static final double WIDTH = 980;
    static final double MARGIN = 20;
    /** The plots' height; they start below the subtitle, however many lines it has. */
    static final double PLOT_HEIGHT = 260;
    private static final String BAR = "#9dbcdc";
    private static final String BAR_EDGE = "#3a6ea5";
    private static final String DOT = "#16324f";
    private static final String PARITY = "#b03030";

    private VhostFigure() {
    }

    /** One panel's figure: its title, the ratio's member in {@code ratios}, and the absolute figure per server. */
    private record Panel(String key, String title, String better, String absolute, String unit) {
    }

    private static final List<Panel> PANELS = List.of(
            new Panel("iops", "IOPS, Kickplug / QSD", "above 1.0x: Kickplug serves more I/O per second", "iops",
                    "IOPS"),
            new Panel("cpu_per_io", "Backend CPU per I/O, Kickplug / QSD", "below 1.0x: Kickplug spends less CPU per I/O",
                    "cpu_us_per_io", "us CPU/IO"));

    /** One bar: backend and depth, the runs' ratios, their median, the two servers' median runs. */
    private record Bar(String label, List<Double> runs, double median, double ofMedians, Json.Value kp,
            Json.Value qsd) {
    }

    /**
     * The SVG of {@code result} ({@code "benchmark": "VhostBench"}).
     *
     * @param resultFile the result's name for the caption ("docs/results/vhost-bench.json")
     */
    static String draw(Json.Value result, String resultFile) {
        Provenance p = Provenance.of(result.get("provenance"));
        Svg svg = new Svg();
        svg.text(MARGIN, 28, "vhost-user-blk: Kickplug's daemon against qemu-storage-daemon, same front-end", "start",
                16, "#111111", "font-weight=\"bold\"");
        double y = 48;
        Json.Value qsd = result.get("qsd");
        String sub = result.get("workload").string() + ". QSD: " + (qsd.isNull() ? "not found" : qsd.string()) + "."
                + " Bar: the median of the runs' ratios. Dot: one run (run r of Kickplug over run r of QSD, measured one"
                + " after the other). Dashed: 1.0x, parity. \"table\": the printed table's ratio of the median runs.";
        for (String line : Svg.wrap(sub, 150)) {
            svg.text(MARGIN, y, line, "start", 11, "#444444", "");
            y += 15;
        }
        double plotTop = y + 48;
        double plotBottom = plotTop + PLOT_HEIGHT;
        List<Json.Value> points = result.get("points").list();
        double panelWidth = (WIDTH - 2 * MARGIN - 40) / 2;
        for (int i = 0; i < PANELS.size(); i++) {
            panel(svg, PANELS.get(i), points, MARGIN + i * (panelWidth + 40), panelWidth, plotTop, plotBottom);
        }
        double end = Svg.caption(svg, MARGIN, plotBottom + 78, WIDTH - 2 * MARGIN, p, resultFile);
        return svg.document(WIDTH, end + 8, "VhostBench: Kickplug / qemu-storage-daemon IOPS and CPU per I/O ratios");
    }

    private static void panel(Svg svg, Panel panel, List<Json.Value> points, double x, double width, double plotTop,
            double plotBottom) {
        svg.text(x, plotTop - 28, panel.title(), "start", 13, "#111111", "font-weight=\"bold\"");
        svg.text(x, plotTop - 13, panel.better(), "start", 11, "#555555", "");
        double left = x + 44;
        double right = x + width - 40; // room for the last bar's label and the parity line's
        List<Bar> bars = new ArrayList<>();
        double max = 1.2;
        for (Json.Value pt : points) {
            Json.Value ratios = pt.get("ratios");
            String label = pt.get("backend").string() + " QD" + pt.get("depth").integer();
            if (ratios.isNull()) {
                continue;
            }
            Json.Value r = ratios.get(panel.key());
            List<Double> runs = new ArrayList<>();
            for (Json.Value v : r.get("runs").list()) {
                runs.add(v.number());
                max = Math.max(max, finite(v.number()));
            }
            double median = r.get("median").number();
            max = Math.max(max, finite(median));
            bars.add(new Bar(label, runs, median, r.get("of_medians").number(), pt.get("kickplug").get("median"),
                    pt.get("qsd").get("median")));
        }
        if (bars.isEmpty()) {
            svg.text(left, (plotTop + plotBottom) / 2, "no qemu-storage-daemon in this run: no ratios", "start", 12,
                    "#555555", "");
            return;
        }
        Scale scale = Scale.covering(0, max * 1.05, 6, plotBottom, plotTop);
        for (double t : scale.ticks()) {
            double ty = scale.at(t);
            svg.line(left, ty, right, ty, "#e4e4e4", 1, null, null);
            svg.text(left - 6, ty + 4, scale.label(t) + "x", "end", 11, "#444444", "");
        }
        double slot = (right - left) / bars.size();
        double barWidth = Math.min(70, slot * 0.55);
        for (int b = 0; b < bars.size(); b++) {
            Bar bar = bars.get(b);
            double cx = left + slot * (b + 0.5);
            String id = panel.key() + "-" + bar.label().replace(' ', '-');
            if (Double.isFinite(bar.median())) {
                double top = scale.at(bar.median());
                svg.rect(cx - barWidth / 2, top, barWidth, scale.at(0) - top, BAR, BAR_EDGE, id + "-bar",
                        bar.label() + ": median " + ratio(bar.median()) + " of " + bar.runs().size() + " runs");
                // Beside the bar's top, where no run's dot is.
                svg.text(cx + barWidth / 2 + 3, top + 4, String.format(Locale.ROOT, "%.2fx", bar.median()), "start",
                        12, "#111111", "font-weight=\"bold\"");
            }
            int n = bar.runs().size();
            for (int r = 0; r < n; r++) {
                double v = bar.runs().get(r);
                if (!Double.isFinite(v)) {
                    continue;
                }
                double dx = (r - (n - 1) / 2.0) * Math.min(9, barWidth / Math.max(1, n));
                svg.circle(cx + dx, scale.at(v), 3.5, DOT, id + "-run" + (r + 1), "run " + (r + 1) + ": " + ratio(v));
            }
            svg.text(cx, plotBottom + 16, bar.label(), "middle", 12, "#111111", "");
            svg.text(cx, plotBottom + 31, absolute(panel, bar.kp()) + " / " + absolute(panel, bar.qsd()), "middle", 10,
                    "#666666", "");
            svg.text(cx, plotBottom + 44, "table " + ratio(bar.ofMedians(), "%.2fx"), "middle", 10, "#666666", "");
        }
        svg.text(left, plotBottom + 60, "under each bar: Kickplug / QSD median run, " + panel.unit(), "start", 10,
                "#666666", "");
        svg.line(left, scale.at(0), right, scale.at(0), "#333333", 1, null, null);
        double parity = scale.at(1);
        svg.line(left, parity, right, parity, PARITY, 1.5, "6 4", panel.key() + "-parity");
        svg.text(right + 4, parity + 4, "1.0x", "start", 11, PARITY, "");
    }

    private static double finite(double v) {
        return Double.isFinite(v) ? v : 0;
    }

    private static String ratio(double v) {
        return ratio(v, "%.3fx");
    }

    private static String ratio(double v, String format) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, format, v) : "n/a";
    }

    /** A server's median run in absolute terms: "61.2k" IOPS or "12.3" us CPU per I/O. */
    private static String absolute(Panel panel, Json.Value median) {
        double v = median.get(panel.absolute()).number();
        if (!Double.isFinite(v)) {
            return "n/a";
        }
        if (panel.key().equals("iops")) {
            return Figures.count(v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }
}
