package io.kickplug.guest.fio;

import io.kickplug.guest.bench.SeedsHtml;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The HTML report of {@code kp:fio --html=FILE}: one self-contained page (inline SVG, no script, nothing fetched),
 * per reported job (or group) its completion-latency percentile curve per direction (fio's percentiles, 1 to
 * 99.99, on the x axis; microseconds on the y axis) and its IOPS over time (in {@link IopsTimeline#BIN_NANOS}
 * bins, merged to at most 200 points).
 */
public final class FioHtml {

    static final int MAX_POINTS = 200;

    private FioHtml() {
    }

    public static void writeFile(Path file, FioReport report) {
        TextFiles.write(file, write(report));
    }

    public static String write(FioReport report) {
        StringBuilder h = new StringBuilder();
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kp:fio ")
                .append(SeedsHtml.esc(report.guest().disk())).append("</title>\n<style>body{font-family:sans-serif;"
                        + "margin:2em;max-width:70em;color:#222}svg{display:block;margin:.5em 0}</style>\n</head><body>\n");
        h.append("<h1>kp:fio on ").append(SeedsHtml.esc(report.guest().disk())).append("</h1>\n<p>")
                .append(SeedsHtml.esc(report.time().toString())).append(", ").append(report.guest().vcpus())
                .append(" vCPUs, ").append(report.guest().queues()).append(" queues</p>\n");
        for (JobResult j : report.reported()) {
            h.append("<h2>").append(SeedsHtml.esc(j.name())).append("</h2>\n");
            for (String dir : List.of("read", "write")) {
                DirectionStats d = dir.equals("read") ? j.read() : j.write();
                if (d.ios() == 0) {
                    continue;
                }
                List<double[]> pts = new ArrayList<>();
                double[] ps = LatencyStat.FIO_PERCENTILES;
                for (int i = 0; i < ps.length; i++) {
                    pts.add(new double[] {i, d.clat().percentile(ps[i]) / 1e3});
                }
                List<String> xLabels = new ArrayList<>();
                for (double p : ps) {
                    xLabels.add(p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p));
                }
                h.append(String.format(Locale.ROOT, "<p>%s: %d I/Os, completion latency percentiles (us)</p>%n", dir,
                        d.ios()));
                h.append(line(pts, xLabels, "percentile", "clat us"));
            }
            IopsTimeline t = j.timeline();
            int bins = t.bins();
            if (bins > 0) {
                int per = Math.max(1, (bins + MAX_POINTS - 1) / MAX_POINTS);
                List<double[]> pts = new ArrayList<>();
                for (int b = 0; b < bins; b += per) {
                    long n = 0;
                    int width = Math.min(per, bins - b);
                    for (int k = 0; k < width; k++) {
                        n += t.count(b + k);
                    }
                    double seconds = width * IopsTimeline.BIN_NANOS / 1e9;
                    pts.add(new double[] {(b + width / 2.0) * IopsTimeline.BIN_NANOS / 1e9, n / seconds});
                }
                h.append("<p>IOPS over time (seconds from the job's start)</p>\n");
                h.append(line(pts, null, "s", "IOPS"));
            }
        }
        return h.append("</body></html>\n").toString();
    }

    /** A polyline chart; {@code xLabels} (optional) label the x positions 0, 1, 2, ... */
    static String line(List<double[]> pts, List<String> xLabels, String xName, String yName) {
        int w = 640;
        int hgt = 240;
        int left = 70;
        int bottom = 30;
        double xMax = 0;
        double yMax = 0;
        for (double[] p : pts) {
            xMax = Math.max(xMax, p[0]);
            yMax = Math.max(yMax, p[1]);
        }
        xMax = xMax <= 0 ? 1 : xMax;
        yMax = yMax <= 0 ? 1 : yMax;
        StringBuilder svg = new StringBuilder(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\">%n", left + w + 20,
                hgt + bottom + 10));
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\"/>", left,
                hgt, left + w, hgt));
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"0\" x2=\"%d\" y2=\"%d\" stroke=\"#000\"/>%n", left,
                left, hgt));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"12\" font-size=\"11\" text-anchor=\"end\">%.1f</text>",
                left - 4, yMax));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">0</text>",
                left - 4, hgt));
        svg.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"%d\" font-size=\"11\">%s</text>", hgt / 2,
                SeedsHtml.esc(yName)));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>%n", left + w - 40,
                hgt + bottom, SeedsHtml.esc(xName)));
        StringBuilder points = new StringBuilder();
        for (int i = 0; i < pts.size(); i++) {
            double[] p = pts.get(i);
            double x = left + p[0] / xMax * w;
            double y = hgt - p[1] / yMax * hgt;
            points.append(String.format(Locale.ROOT, "%s%.1f,%.1f", i == 0 ? "" : " ", x, y));
            if (xLabels != null && i < xLabels.size() && (i % 2 == 0 || i == pts.size() - 1)) {
                svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" font-size=\"9\" "
                        + "text-anchor=\"middle\">%s</text>", x, hgt + 12, SeedsHtml.esc(xLabels.get(i))));
            }
        }
        if (xLabels == null) {
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.2f"
                    + "</text>", left + w, hgt + 12, xMax));
        }
        svg.append("<polyline fill=\"none\" stroke=\"#3a6ea5\" stroke-width=\"1.5\" points=\"").append(points)
                .append("\"/>\n");
        return svg.append("</svg>\n").toString();
    }
}
