package io.kickplug.guest.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The HTML report of {@code kp:bench seeds --html FILE}: one self-contained page (inline CSS and SVG, no script,
 * nothing fetched from the network). Per seed: the verdict, the clock it ran in, a bar chart of the published
 * effect beside the measured one (the measure of {@link SeedResult#magnitudeRatio}), a bar chart of every
 * point's IOPS, and the points' parameters and figures as a table.
 */
public final class SeedsHtml {

    private SeedsHtml() {
    }

    public static String write(List<SeedResult> seeds, long runtimeNanos, HostLoad load, String started) {
        return write(seeds, runtimeNanos, load, started, false);
    }

    /**
     * @param quick whether the run was {@code --quick}: the title and a banner say so, and every verdict is marked
     *     "(quick)"
     */
    public static String write(List<SeedResult> seeds, long runtimeNanos, HostLoad load, String started,
            boolean quick) {
        String title = quick ? "kp:bench seeds --quick" : "kp:bench seeds";
        String mark = quick ? " (quick)" : "";
        StringBuilder h = new StringBuilder();
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>").append(title)
                .append("</title>\n");
        h.append("<style>body{font-family:sans-serif;margin:2em;max-width:70em;color:#222}"
                + "table{border-collapse:collapse;font-size:85%}td,th{border:1px solid #ccc;padding:2px 6px;"
                + "text-align:left}.ok{color:#060}.bad{color:#a00}.na{color:#666}.uns{color:#a60;font-weight:bold}svg{display:block;margin:.5em 0}"
                + (quick ? ".quick{border:2px solid #a60;background:#fff4e0;padding:.5em}" : "")
                + "</style>\n</head><body>\n");
        h.append("<h1>").append(title).append("</h1>\n");
        if (quick) {
            h.append("<p class=\"quick\">").append(esc(SeedsFormat.QUICK_HEADING)).append("</p>\n");
        }
        h.append("<p>Started ").append(esc(started)).append(", ")
                .append(esc(SeedsFormat.seconds(runtimeNanos))).append(" per point; ").append(esc(load.describe()))
                .append("</p>\n");
        h.append("<table><tr><th>seed</th><th>direction</th><th>magnitude (measured / published)</th>"
                + "<th>rounds: magnitude min to max</th><th>within 2x</th><th>clock</th></tr>\n");
        for (SeedResult s : seeds) {
            Boolean w = s.withinTwoX();
            h.append("<tr><td><a href=\"#seed").append(esc(s.id())).append("\">").append(esc(s.id())).append("</a></td>")
                    .append("<td class=\"").append(cls(s)).append("\">").append(esc(s.verdict()))
                    .append(mark).append("</td><td>").append(Double.isNaN(s.magnitudeRatio()) ? "n/a"
                            : String.format(Locale.ROOT, "%.2f", s.magnitudeRatio()))
                    .append("</td><td>").append(esc(spreadCell(s)))
                    .append("</td><td class=\"").append(s.unstable() ? "uns" : cls(w)).append("\">")
                    .append(s.unstable() ? "unstable" : w == null ? "n/a" : w ? "yes" : "no").append(mark)
                    .append("</td><td>").append(esc(s.clock())).append("</td></tr>\n");
        }
        h.append("</table>\n");
        h.append("<p>").append(esc(SeedsFormat.counts(seeds) + mark)).append("</p>\n");
        for (SeedResult s : seeds) {
            h.append("<h2 id=\"seed").append(esc(s.id())).append("\">seed ").append(esc(s.id())).append(": ")
                    .append(esc(s.title())).append("</h2>\n");
            h.append("<p><b>published:</b> ").append(esc(s.published())).append("<br><b>measured:</b> ")
                    .append(esc(s.measured())).append("<br><b>direction:</b> <span class=\"")
                    .append(cls(s)).append("\">").append(esc(SeedsFormat.direction(s) + mark)).append("</span> (")
                    .append(esc(s.rule())).append(")<br><b>magnitude:</b> ").append(esc(SeedsFormat.magnitude(s) + mark))
                    .append(SeedsFormat.rounds(s).isEmpty() ? "" : "<br><b>rounds:</b> " + esc(SeedsFormat.rounds(s)))
                    .append("<br><b>clock:</b> ").append(esc(s.clock()))
                    .append(SeedEffects.sources(s.id()) == null ? "" : "<br><b>sources:</b> "
                            + esc(SeedEffects.sources(s.id()))).append("</p>\n");
            double pub = SeedEffects.published(s.id());
            if (!Double.isNaN(pub) && !Double.isNaN(s.magnitudeRatio())) {
                List<String> labels = List.of("published", "measured");
                List<Double> values = List.of(pub, SeedEffects.measured(s));
                SeedSpread spread = s.spread();
                List<double[]> whiskers = new ArrayList<>();
                whiskers.add(null);
                whiskers.add(spread.measured() ? new double[] {spread.min(), spread.max()} : null);
                h.append("<p>").append(esc(SeedEffects.measure(s.id())))
                        .append(spread.measured() ? "; measured: the median round's effect, whisker: the rounds' min to max"
                                : "").append("</p>\n");
                h.append(bars(labels, values, "%.2f", whiskers));
            }
            List<String> labels = new ArrayList<>();
            List<Double> iops = new ArrayList<>();
            List<double[]> ranges = new ArrayList<>();
            for (SeedResult.Point p : s.points()) {
                Double v = p.figures().get("IOPS");
                if (v != null && !v.isNaN()) {
                    labels.add(p.label());
                    iops.add(v);
                    Double lo = p.figures().get("IOPS-rounds-min");
                    Double hi = p.figures().get("IOPS-rounds-max");
                    ranges.add(lo != null && hi != null ? new double[] {lo, hi} : null);
                }
            }
            if (!iops.isEmpty()) {
                h.append("<p>IOPS per point (bar: the median round; whisker: the rounds' min to max)</p>\n")
                        .append(bars(labels, iops, "%.0f", ranges));
            }
            h.append("<table><tr><th>point</th><th>parameters</th><th>figures</th></tr>\n");
            for (SeedResult.Point p : s.points()) {
                h.append("<tr><td>").append(esc(p.label())).append("</td><td>").append(esc(SeedsFormat.params(p.params())))
                        .append("</td><td>").append(esc(SeedsFormat.figures(p.figures()))).append("</td></tr>\n");
            }
            h.append("</table>\n");
            for (String note : s.notes()) {
                h.append("<p class=\"na\">note: ").append(esc(note)).append("</p>\n");
            }
        }
        h.append("</body></html>\n");
        return h.toString();
    }

    /**
     * Horizontal bars, one per value, scaled to the largest magnitude; negative values grow left of the axis.
     */
    public static String bars(List<String> labels, List<Double> values, String format) {
        return bars(labels, values, format, java.util.Collections.nCopies(values.size(), null));
    }

    /**
     * Horizontal bars as {@link #bars(List, List, String)}, each with an error bar from {@code whiskers}' low to high
     * (null: none); the scale covers the whiskers too.
     */
    static String bars(List<String> labels, List<Double> values, String format, List<double[]> whiskers) {
        int rowH = 22;
        int labelW = 260;
        int barW = 420;
        double max = 0;
        boolean negative = false;
        for (double v : values) {
            max = Math.max(max, Math.abs(v));
            negative |= v < 0;
        }
        for (double[] w : whiskers) {
            if (w != null) {
                for (double v : w) {
                    if (Double.isFinite(v)) {
                        max = Math.max(max, Math.abs(v));
                        negative |= v < 0;
                    }
                }
            }
        }
        if (max == 0) {
            max = 1;
        }
        int axis = labelW + (negative ? barW / 2 : 0);
        double scale = (negative ? barW / 2.0 : barW) / max;
        int height = rowH * values.size() + 4;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "role=\"img\">%n", labelW + barW + 90, height));
        for (int i = 0; i < values.size(); i++) {
            double v = values.get(i);
            int y = i * rowH + 2;
            int w = (int) Math.round(Math.abs(v) * scale);
            int x = v < 0 ? axis - w : axis;
            String color = labels.get(i).equals("published") ? "#888" : "#3a6ea5";
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">%s</text>",
                    labelW - 6, y + 14, esc(labels.get(i))));
            svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>",
                    x, y, Math.max(1, w), rowH - 6, color));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>%n",
                    (v < 0 ? axis : x + w) + 4, y + 14, esc(String.format(Locale.ROOT, format, v))));
            double[] wh = whiskers.get(i);
            if (wh != null && Double.isFinite(wh[0]) && Double.isFinite(wh[1])) {
                long x1 = Math.round(axis + wh[0] * scale);
                long x2 = Math.round(axis + wh[1] * scale);
                int cy = y + (rowH - 6) / 2;
                svg.append(String.format(Locale.ROOT, "<g class=\"whisker\" stroke=\"#102a43\"><title>rounds: "
                        + "%s to %s</title><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><line x1=\"%d\" y1=\"%d\" "
                        + "x2=\"%d\" y2=\"%d\"/><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/></g>%n",
                        esc(String.format(Locale.ROOT, format, wh[0])), esc(String.format(Locale.ROOT, format, wh[1])),
                        x1, cy, x2, cy, x1, cy - 5, x1, cy + 5, x2, cy - 5, x2, cy + 5));
            }
        }
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"0\" x2=\"%d\" y2=\"%d\" stroke=\"#000\"/>%n", axis,
                axis, height));
        return svg.append("</svg>\n").toString();
    }

    /** The verdict's class: ok, bad, na, or uns for an unstable seed. */
    private static String cls(SeedResult s) {
        return s.unstable() ? "uns" : cls(s.directionMatches());
    }

    /** "0.72x to 1.68x (3 rounds)", or "1 run" without rounds. */
    private static String spreadCell(SeedResult s) {
        SeedSpread spread = s.spread();
        return spread.measured() ? String.format(Locale.ROOT, "%.2fx to %.2fx (%d rounds)", spread.ratioMin(),
                spread.ratioMax(), spread.rounds().size()) : "1 run";
    }

    private static String cls(Boolean b) {
        return b == null ? "na" : b ? "ok" : "bad";
    }

    /** Text for HTML: &lt; &gt; &amp; &quot; escaped. */
    public static String esc(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder out = new StringBuilder(s.length());
        for (char c : s.toCharArray()) {
            switch (c) {
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '&' -> out.append("&amp;");
                case '"' -> out.append("&quot;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }
}
