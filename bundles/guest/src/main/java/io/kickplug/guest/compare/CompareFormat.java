package io.kickplug.guest.compare;

import io.kickplug.api.text.JsonText;
import io.kickplug.guest.bench.SeedsHtml;
import io.kickplug.guest.compare.CompareResult.Figure;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The text table, JSON and HTML page of {@code kp:compare}. */
public final class CompareFormat {

    private CompareFormat() {
    }

    /** A number as the table shows it: "-" for NaN, thousands without decimals, small ones with two. */
    static String number(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        return Math.abs(v) >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.2f", v);
    }

    /** One row per strategy, the medians; then the failed runs, if any. */
    public static String text(CompareResult r) {
        List<String[]> rows = new ArrayList<>();
        List<String> header = new ArrayList<>(List.of("strategy"));
        for (Figure f : Figure.values()) {
            header.add(f.column);
        }
        rows.add(header.toArray(String[]::new));
        for (Map.Entry<String, Map<Figure, Double>> e : r.medians().entrySet()) {
            List<String> row = new ArrayList<>(List.of(e.getKey()));
            for (Figure f : Figure.values()) {
                row.add(number(e.getValue().get(f)));
            }
            rows.add(row.toArray(String[]::new));
        }
        int[] w = new int[header.size()];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                w[i] = Math.max(w[i], row[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        sb.append("kp:compare ").append(r.disk()).append(": job '").append(r.job()).append("', ")
                .append(r.plan().rounds()).append(r.plan().rounds() == 1 ? " round" : " rounds")
                .append(" interleaved, medians\n");
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                sb.append(i == 0 ? String.format(Locale.ROOT, "%-" + w[i] + "s", row[i])
                        : String.format(Locale.ROOT, "  %" + w[i] + "s", row[i]));
            }
            sb.append('\n');
        }
        List<String> errors = r.errors();
        if (!errors.isEmpty()) {
            sb.append(errors.size()).append(" failed:\n");
            errors.forEach(e -> sb.append("  ").append(e).append('\n'));
        }
        return sb.toString().stripTrailing();
    }

    private static void num(StringBuilder sb, double v) {
        sb.append(Double.isNaN(v) || Double.isInfinite(v) ? "null" : String.format(Locale.ROOT, "%.4f", v));
    }

    /**
     * {"disk", "job", "rounds", "started", "strategies": [...], "medians": {STRATEGY: {FIGURE: v}}, "samples":
     * [{"strategy", "round", "ios", "seconds", "requests", "interrupts", "kicks", FIGURE: v, ..., "errors"}]}.
     */
    public static String json(CompareResult r) {
        StringBuilder sb = new StringBuilder("{\"disk\":");
        JsonText.appendQuoted(sb, r.disk()).append(",\"job\":");
        JsonText.appendQuoted(sb, r.job()).append(",\"rounds\":").append(r.plan().rounds()).append(",\"started\":");
        JsonText.appendQuoted(sb, r.started()).append(",\"strategies\":[");
        for (int i = 0; i < r.plan().candidates().size(); i++) {
            JsonText.appendQuoted(sb.append(i == 0 ? "" : ","), r.plan().candidates().get(i));
        }
        sb.append("],\"medians\":{");
        boolean first = true;
        for (Map.Entry<String, Map<Figure, Double>> e : r.medians().entrySet()) {
            JsonText.appendQuoted(sb.append(first ? "" : ","), e.getKey()).append(":{");
            first = false;
            boolean f1 = true;
            for (Map.Entry<Figure, Double> m : e.getValue().entrySet()) {
                sb.append(f1 ? "" : ",").append('"').append(m.getKey().key()).append("\":");
                num(sb, m.getValue() * m.getKey().jsonScale);
                f1 = false;
            }
            sb.append('}');
        }
        sb.append("},\"samples\":[");
        for (int i = 0; i < r.samples().size(); i++) {
            Sample s = r.samples().get(i);
            sb.append(i == 0 ? "" : ",").append("{\"strategy\":");
            JsonText.appendQuoted(sb, s.candidate()).append(",\"round\":").append(s.round() + 1)
                    .append(",\"ios\":").append(s.ios()).append(",\"seconds\":");
            num(sb, s.seconds());
            sb.append(",\"requests\":").append(s.requests()).append(",\"interrupts\":").append(s.interrupts())
                    .append(",\"kicks\":").append(s.kicks()).append(",\"cpu_ns\":").append(s.cpuNanos());
            for (Figure f : Figure.values()) {
                sb.append(",\"").append(f.key()).append("\":");
                num(sb, f.of.applyAsDouble(s) * f.jsonScale);
            }
            sb.append(",\"errors\":[");
            for (int k = 0; k < s.errors().size(); k++) {
                JsonText.appendQuoted(sb.append(k == 0 ? "" : ","), s.errors().get(k));
            }
            sb.append("]}");
        }
        return sb.append("]}\n").toString();
    }

    /** A self-contained page: the table, then one bar chart (SVG, {@link SeedsHtml#bars}) per figure. */
    public static String html(CompareResult r) {
        StringBuilder h = new StringBuilder();
        String title = "kp:compare " + r.disk();
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>")
                .append(SeedsHtml.esc(title)).append("</title>\n<style>body{font-family:sans-serif;margin:2em;"
                        + "max-width:70em;color:#222}table{border-collapse:collapse;font-size:85%}td,th{border:1px "
                        + "solid #ccc;padding:2px 6px;text-align:right}td:first-child,th:first-child{text-align:left}"
                        + "svg{display:block;margin:.5em 0}</style>\n</head><body>\n");
        h.append("<h1>").append(SeedsHtml.esc(title)).append("</h1>\n<p>Job <code>").append(SeedsHtml.esc(r.job()))
                .append("</code>, ").append(r.plan().rounds()).append(" rounds interleaved (")
                .append(SeedsHtml.esc(String.join(" ", r.plan().candidates()))).append(" per round), started ")
                .append(SeedsHtml.esc(r.started())).append(". Medians over the rounds.</p>\n<table><tr><th>strategy</th>");
        for (Figure f : Figure.values()) {
            h.append("<th>").append(SeedsHtml.esc(f.column)).append("</th>");
        }
        h.append("</tr>\n");
        Map<String, Map<Figure, Double>> medians = r.medians();
        for (Map.Entry<String, Map<Figure, Double>> e : medians.entrySet()) {
            h.append("<tr><td>").append(SeedsHtml.esc(e.getKey())).append("</td>");
            for (Figure f : Figure.values()) {
                h.append("<td>").append(number(e.getValue().get(f))).append("</td>");
            }
            h.append("</tr>\n");
        }
        h.append("</table>\n");
        for (Figure f : Figure.values()) {
            List<String> labels = new ArrayList<>();
            List<Double> values = new ArrayList<>();
            for (Map.Entry<String, Map<Figure, Double>> e : medians.entrySet()) {
                double v = e.getValue().get(f);
                if (!Double.isNaN(v)) {
                    labels.add(e.getKey());
                    values.add(v);
                }
            }
            if (values.isEmpty()) {
                continue;
            }
            h.append("<h2>").append(SeedsHtml.esc(f.title)).append(f.lowerIsBetter ? " (lower is better)"
                    : " (higher is better)").append("</h2>\n");
            h.append(SeedsHtml.bars(labels, values, f == Figure.IOPS ? "%.0f" : "%.2f"));
        }
        List<String> errors = r.errors();
        if (!errors.isEmpty()) {
            h.append("<h2>Failed runs</h2>\n<ul>\n");
            errors.forEach(e -> h.append("<li>").append(SeedsHtml.esc(e)).append("</li>\n"));
            h.append("</ul>\n");
        }
        return h.append("</body></html>\n").toString();
    }
}
