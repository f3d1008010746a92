package io.kickplug.guest.bench;

import io.kickplug.api.text.JsonText;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The real-guest part of the {@code kp:bench seeds} report, beside the simulated seeds: text (appended to the
 * simulated report), JSON (a top-level {@code real_guest} object) and HTML (a section before the end of the page).
 */
public final class RealGuestFormat {

    private RealGuestFormat() {
    }

    /** One line for how the real guest ran, or why not. */
    static String heading(RealGuestReport r) {
        if (r.notRun() != null) {
            return "real Linux guest: not run: " + r.notRun();
        }
        return String.format(Locale.ROOT, "real Linux guest: %s, accel %s, kernel %s (%s), %d vCPUs, 1 GiB, fio in the"
                + " guest over Kickplug's vhost-user-blk export of a null disk in this runtime, %s per point, %d"
                + " round(s) of every point interleaved in one boot per seed (figures: medians of the rounds); %s",
                r.qemu(), r.accel(), r.kernel(), r.image(), RealGuestReport.VCPUS,
                SeedsFormat.seconds(r.runtimeNanos()), r.rounds(), r.load() == null ? "host load not measured" : load(r.load()));
    }

    /** The host's load over the real-guest part: QEMU is among the other processes. */
    static String load(HostLoad l) {
        if (Double.isNaN(l.busyCores())) {
            return String.format(Locale.ROOT, "host CPUs %d, load average %.2f -> %.2f (1 min)", l.cpus(),
                    l.loadAvgStart(), l.loadAvgEnd());
        }
        return String.format(Locale.ROOT, "host CPUs %d, %.2f cores busy on average (this JVM %.2f, QEMU and other"
                + " processes %.2f), load average %.2f -> %.2f (1 min)", l.cpus(), l.busyCores(), l.ownCores(),
                l.otherCores(), l.loadAvgStart(), l.loadAvgEnd());
    }

    /**
     * The text section: per seed the simulated measured line and the real guest's, each with its verdict, then the
     * real guest's points.
     */
    public static String text(RealGuestReport r, List<SeedResult> simulated) {
        StringBuilder out = new StringBuilder();
        out.append('\n').append(heading(r)).append('\n');
        if (r.notRun() != null) {
            return out.toString();
        }
        if (r.accel().equals("tcg")) {
            out.append("  note: ").append(RealGuestBench.TCG_NOTE).append('\n');
        }
        for (RealGuestReport.Seed s : r.seeds()) {
            out.append(String.format(Locale.ROOT, "%nseed %s on the real guest: %s%n", s.id(), s.title()));
            SeedResult sim = simulated.stream().filter(x -> x.id().equals(s.id())).findFirst().orElse(null);
            out.append("  simulated:  ").append(sim == null ? "not run (--real-guest-only)"
                    : sim.measured() + " [" + sim.verdict() + ", " + SeedsFormat.magnitudeShort(sim) + "]").append('\n');
            out.append("  real guest: ").append(s.measured());
            if (s.notRun() == null) {
                out.append(" [").append(s.verdict()).append(", ").append(magnitudeShort(s)).append(']');
            }
            out.append('\n');
            int width = s.points().stream().mapToInt(p -> p.label().length()).max().orElse(0);
            for (SeedResult.Point p : s.points()) {
                out.append(String.format(Locale.ROOT, "  %-" + Math.max(1, width) + "s | %s, accel %s | %s%n",
                        p.label(), SeedsFormat.params(p.params()), r.accel(), SeedsFormat.figures(p.figures())));
            }
            for (String note : s.notes()) {
                out.append("  note: ").append(note).append('\n');
            }
        }
        return out.toString();
    }

    static String magnitudeShort(RealGuestReport.Seed s) {
        Boolean within = s.withinTwoX();
        return within == null ? "magnitude n/a" : String.format(Locale.ROOT, "%.2fx %s", s.magnitudeRatio(),
                within ? "within 2x" : "off >2x");
    }

    /** The {@code "real_guest": {...}} member (no trailing comma). */
    static String json(RealGuestReport r) {
        StringBuilder out = new StringBuilder("  \"real_guest\": {\n");
        out.append("    \"not_run\": ").append(JsonText.quote(r.notRun())).append(",\n");
        out.append("    \"qemu\": ").append(JsonText.quote(r.qemu())).append(",\n");
        out.append("    \"accel\": ").append(JsonText.quote(r.accel())).append(",\n");
        out.append("    \"kernel\": ").append(JsonText.quote(r.kernel())).append(",\n");
        out.append("    \"image\": ").append(JsonText.quote(r.image())).append(",\n");
        out.append("    \"vcpus\": ").append(RealGuestReport.VCPUS).append(",\n");
        out.append("    \"runtime_s\": ").append(SeedsJson.number(r.runtimeNanos() / 1e9)).append(",\n");
        out.append("    \"rounds\": ").append(r.rounds()).append(",\n");
        HostLoad l = r.load();
        if (l == null) {
            out.append("    \"host_load\": null,\n");
        } else {
            out.append("    \"host_load\": {\"cpus\": ").append(l.cpus()).append(", \"busy_cores\": ")
                    .append(SeedsJson.number(l.busyCores())).append(", \"own_cores\": ")
                    .append(SeedsJson.number(l.ownCores())).append(", \"other_cores\": ")
                    .append(SeedsJson.number(l.otherCores())).append(", \"loadavg_1min_start\": ")
                    .append(SeedsJson.number(l.loadAvgStart())).append(", \"loadavg_1min_end\": ")
                    .append(SeedsJson.number(l.loadAvgEnd())).append("},\n");
        }
        out.append("    \"note\": ").append(JsonText.quote(r.notRun() == null && "tcg".equals(r.accel())
                ? RealGuestBench.TCG_NOTE : null)).append(",\n");
        out.append("    \"seeds\": [");
        for (int i = 0; i < r.seeds().size(); i++) {
            RealGuestReport.Seed s = r.seeds().get(i);
            out.append(i == 0 ? "\n" : ",\n");
            out.append("      {\"id\": ").append(JsonText.quote(s.id()));
            out.append(", \"title\": ").append(JsonText.quote(s.title()));
            out.append(", \"not_run\": ").append(JsonText.quote(s.notRun()));
            out.append(",\n       \"measured\": ").append(JsonText.quote(s.measured()));
            out.append(",\n       \"measured_figures\": ").append(SeedsJson.numbers(s.measuredFigures()));
            out.append(",\n       \"direction_matches\": ").append(s.directionMatches());
            out.append(", \"verdict\": ").append(JsonText.quote(s.verdict()));
            out.append(", \"magnitude_ratio\": ").append(SeedsJson.number(s.magnitudeRatio()));
            out.append(", \"within_2x\": ").append(s.withinTwoX());
            out.append(",\n       ");
            SeedsJson.notesAndPoints(out, s.notes(), s.points(), "       ", params -> strings(params, r.accel()));
            out.append('}');
        }
        out.append(r.seeds().isEmpty() ? "]\n  }" : "\n    ]\n  }");
        return out.toString();
    }

    /** {@code json} (an object's text, ending in "}") with the {@code real_guest} member added last. */
    public static String addToJson(String json, RealGuestReport r) {
        int end = json.lastIndexOf('}');
        if (end < 0) {
            throw new IllegalArgumentException("not a JSON object");
        }
        String head = json.substring(0, end).stripTrailing();
        boolean empty = head.endsWith("{");
        return head + (empty ? "\n" : ",\n") + json(r) + "\n}\n";
    }

    private static String strings(Map<String, String> map, String accel) {
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<String, String> e : map.entrySet()) {
            out.append(JsonText.quote(e.getKey())).append(": ").append(JsonText.quote(e.getValue())).append(", ");
        }
        return out.append("\"accel\": ").append(JsonText.quote(accel)).append('}').toString();
    }

    /** The HTML section: heading, per seed simulated and real-guest lines, a bar chart of IOPS and the points. */
    static String html(RealGuestReport r, List<SeedResult> simulated) {
        StringBuilder h = new StringBuilder("<h2 id=\"real-guest\">Real Linux guest</h2>\n<p>")
                .append(SeedsHtml.esc(heading(r))).append("</p>\n");
        if (r.notRun() != null) {
            return h.toString();
        }
        if (r.accel().equals("tcg")) {
            h.append("<p><b>note:</b> ").append(SeedsHtml.esc(RealGuestBench.TCG_NOTE)).append("</p>\n");
        }
        for (RealGuestReport.Seed s : r.seeds()) {
            SeedResult sim = simulated.stream().filter(x -> x.id().equals(s.id())).findFirst().orElse(null);
            h.append("<h3>seed ").append(SeedsHtml.esc(s.id())).append(" on the real guest: ")
                    .append(SeedsHtml.esc(s.title())).append("</h3>\n<p><b>simulated:</b> ")
                    .append(SeedsHtml.esc(sim == null ? "not run" : sim.measured() + " [" + sim.verdict() + "]"))
                    .append("<br><b>real guest:</b> ").append(SeedsHtml.esc(s.measured())).append(" [")
                    .append(SeedsHtml.esc(s.verdict())).append(", ").append(SeedsHtml.esc(magnitudeShort(s)))
                    .append("]</p>\n");
            if (!s.points().isEmpty()) {
                h.append(SeedsHtml.bars(s.points().stream().map(SeedResult.Point::label).toList(),
                        s.points().stream().map(p -> p.figures().getOrDefault("IOPS", Double.NaN)).toList(), "%.0f"));
                h.append("<table><tr><th>point</th><th>parameters</th><th>figures</th></tr>\n");
                for (SeedResult.Point p : s.points()) {
                    h.append("<tr><td>").append(SeedsHtml.esc(p.label())).append("</td><td>")
                            .append(SeedsHtml.esc(SeedsFormat.params(p.params()) + ", accel " + r.accel()))
                            .append("</td><td>").append(SeedsHtml.esc(SeedsFormat.figures(p.figures())))
                            .append("</td></tr>\n");
                }
                h.append("</table>\n");
            }
            for (String note : s.notes()) {
                h.append("<p>note: ").append(SeedsHtml.esc(note)).append("</p>\n");
            }
        }
        return h.toString();
    }

    /** {@code page} with the real-guest section before its end ({@code </body>}). */
    public static String addToHtml(String page, RealGuestReport r, List<SeedResult> simulated) {
        int end = page.lastIndexOf("</body>");
        String section = html(r, simulated);
        return end < 0 ? page + section : page.substring(0, end) + section + page.substring(end);
    }
}
