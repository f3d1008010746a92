package io.kickplug.benchmarks.vhost;

import io.kickplug.benchmarks.report.Json;
import io.kickplug.benchmarks.report.Provenance;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The result file of {@code VhostBench --json FILE}: provenance, the options the run had, then per backend and queue
 * depth every run of each server, its median run, and the Kickplug/QSD ratios (per run, their median, and the
 * ratio of the median runs that the printed table shows). Read back by {@code io.kickplug.benchmarks.report.Figures}.
 * Numbers that could not be measured (a ratio over zero) are null.
 */
final class VhostJson {

    /** What the medians are: the table's rule, kept so the file says what its "median" members hold. */
    static final String MEDIAN_RULE = "median: the run with the median CPU per I/O, with its own IOPS, latencies,"
            + " kicks and waits (per-column medians would mix runs); ratios.X.runs: run r of Kickplug over run r of"
            + " QSD, measured one after the other; ratios.X.median: the median of those; ratios.X.of_medians: the"
            + " median runs' ratio, as the printed table";

    private VhostJson() {
    }

    /**
     * One backend and queue depth: each server's runs in the order they ran.
     *
     * @param runs server name ("kickplug": the first launcher; "kickplug-jar" or "kickplug-kickplugd": another; "qsd")
     *     to its runs, Kickplug's first; QSD absent when it was not found
     */
    record Entry(String backend, int depth, Map<String, List<VhostBench.Point>> runs) {
    }

    /** The ratios written per point: name, the figure, Kickplug over QSD. */
    private static final List<Map.Entry<String, ToDoubleFunction<VhostBench.Point>>> RATIOS = List.of(
            Map.entry("iops", VhostBench.Point::iops),
            Map.entry("cpu_per_io", VhostBench.Point::cpuUsPerIo),
            Map.entry("p50", p -> p.p50ns()),
            Map.entry("p99", p -> p.p99ns()),
            Map.entry("p999", p -> p.p999ns()));

    /**
     * @param options the run's options as given or defaulted (name to value)
     * @param qsd qemu-storage-daemon's version line, or null when it was not found (Kickplug only)
     */
    static String write(Provenance provenance, Map<String, String> options, String workload, String qsd,
            List<Entry> entries) {
        StringBuilder out = new StringBuilder();
        out.append("{\n  \"benchmark\": \"VhostBench\",\n");
        out.append("  \"provenance\": ").append(provenance.json("  ")).append(",\n");
        out.append("  \"options\": {");
        boolean first = true;
        for (Map.Entry<String, String> o : options.entrySet()) {
            out.append(first ? "" : ", ").append(Json.quote(o.getKey())).append(": ").append(Json.quote(o.getValue()));
            first = false;
        }
        out.append("},\n");
        out.append("  \"workload\": ").append(Json.quote(workload)).append(",\n");
        out.append("  \"qsd\": ").append(Json.quote(qsd)).append(",\n");
        out.append("  \"median_rule\": ").append(Json.quote(MEDIAN_RULE)).append(",\n");
        out.append("  \"points\": [");
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            out.append(i == 0 ? "\n" : ",\n");
            out.append("    {\"backend\": ").append(Json.quote(e.backend())).append(", \"depth\": ").append(e.depth())
                    .append(",\n");
            for (Map.Entry<String, List<VhostBench.Point>> s : e.runs().entrySet()) {
                List<VhostBench.Point> runs = s.getValue();
                int median = VhostBench.medianIndex(runs);
                out.append("     ").append(Json.quote(s.getKey())).append(": {\"runs\": [");
                for (int r = 0; r < runs.size(); r++) {
                    out.append(r == 0 ? "\n" : ",\n").append("       ").append(point(runs.get(r)));
                }
                out.append("],\n       \"median_run\": ").append(median + 1).append(", \"median\": ")
                        .append(point(runs.get(median))).append("},\n");
            }
            List<VhostBench.Point> qsdRuns = e.runs().get("qsd");
            boolean firstRatios = true;
            for (Map.Entry<String, List<VhostBench.Point>> s : e.runs().entrySet()) {
                if (!s.getKey().startsWith("kickplug")) {
                    continue;
                }
                // "ratios": the first launcher's (server "kickplug"); "ratios_jar" and so on: another launcher's.
                String key = s.getKey().equals("kickplug") ? "ratios"
                        : "ratios_" + s.getKey().substring("kickplug-".length());
                out.append(firstRatios ? "" : ",\n").append("     ").append(Json.quote(key)).append(": ");
                firstRatios = false;
                if (qsdRuns == null) {
                    out.append("null");
                    continue;
                }
                out.append('{');
                for (int k = 0; k < RATIOS.size(); k++) {
                    Map.Entry<String, ToDoubleFunction<VhostBench.Point>> r = RATIOS.get(k);
                    out.append(k == 0 ? "\n" : ",\n").append("       ");
                    out.append(Json.quote(r.getKey())).append(": ").append(ratio(s.getValue(), qsdRuns, r.getValue()));
                }
                out.append('}');
            }
            out.append("}");
        }
        out.append(entries.isEmpty() ? "]\n}\n" : "\n  ]\n}\n");
        return out.toString();
    }

    /** {"runs": [...], "median": x, "of_medians": y} for one figure. */
    private static String ratio(List<VhostBench.Point> kp, List<VhostBench.Point> qsd,
            ToDoubleFunction<VhostBench.Point> f) {
        int n = Math.min(kp.size(), qsd.size());
        List<Double> runs = new ArrayList<>();
        StringBuilder sb = new StringBuilder("{\"runs\": [");
        for (int r = 0; r < n; r++) {
            double v = over(f.applyAsDouble(kp.get(r)), f.applyAsDouble(qsd.get(r)));
            runs.add(v);
            sb.append(r == 0 ? "" : ", ").append(Json.number(v));
        }
        double ofMedians = over(f.applyAsDouble(kp.get(VhostBench.medianIndex(kp))),
                f.applyAsDouble(qsd.get(VhostBench.medianIndex(qsd))));
        return sb.append("], \"median\": ").append(Json.number(median(runs))).append(", \"of_medians\": ")
                .append(Json.number(ofMedians)).append('}').toString();
    }

    /** {@code a / b}, NaN (written null) when {@code b} is not positive. */
    static double over(double a, double b) {
        return b > 0 ? a / b : Double.NaN;
    }

    /** The median of the finite values (the mean of the middle two of an even count); NaN when there are none. */
    static double median(List<Double> values) {
        List<Double> v = new ArrayList<>();
        for (double d : values) {
            if (!Double.isNaN(d) && !Double.isInfinite(d)) {
                v.add(d);
            }
        }
        if (v.isEmpty()) {
            return Double.NaN;
        }
        v.sort(Double::compare);
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    private static String point(VhostBench.Point p) {
        return "{\"iops\": " + Json.number(p.iops()) + ", \"cpu_us_per_io\": " + Json.number(p.cpuUsPerIo())
                + ", \"p50_ns\": " + p.p50ns() + ", \"p99_ns\": " + p.p99ns() + ", \"p999_ns\": " + p.p999ns()
                + ", \"kicks_per_io\": " + Json.number(p.kicksPerIo()) + ", \"waits_per_io\": "
                + Json.number(p.waitsPerIo()) + regime(p) + "}";
    }

    /** The run's regime counters ({@code VhostBench.Point#regime}), when measured. */
    private static String regime(VhostBench.Point p) {
        if (p.regime().isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder(", \"regime\": {");
        String sep = "";
        for (Map.Entry<String, Double> e : p.regime().entrySet()) {
            b.append(sep).append(Json.quote(e.getKey())).append(": ").append(Json.number(e.getValue()));
            sep = ", ";
        }
        return b.append('}').toString();
    }
}
