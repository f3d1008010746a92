package io.kickplug.guest.compare;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * A comparison's samples and, per candidate, the median of each figure over its rounds.
 *
 * @param disk the disk compared on
 * @param job the fio job, as given
 * @param plan the candidates and rounds
 * @param samples every run, in the order they ran
 * @param started when the comparison started (ISO-8601)
 */
public record CompareResult(String disk, String job, ComparePlan plan, List<Sample> samples, String started) {

    /** The figures compared, in table order: name, unit, how a sample gives it, whether lower is better. */
    public enum Figure {
        IOPS("iops", "IOPS", Sample::iops, false, "iops", 1),
        IRQ_PER_REQ("irq/req", "interrupts per request", Sample::interruptsPerRequest, true, "irq_per_req", 1),
        KICK_PER_REQ("kick/req", "kicks per request", Sample::kicksPerRequest, true, "kick_per_req", 1),
        P50("p50 us", "median completion latency (us)", Sample::p50Micros, true, "p50_ns", 1000),
        P99("p99 us", "99th percentile completion latency (us)", Sample::p99Micros, true, "p99_ns", 1000),
        CPU_PER_IO("cpu us/io", "device CPU per I/O (us)", Sample::cpuMicrosPerIo, true, "cpu_per_io_ns", 1000);

        public final String column;
        public final String title;
        public final ToDoubleFunction<Sample> of;
        public final boolean lowerIsBetter;
        private final String key;
        /** What the JSON value is the table's times: nanoseconds there, microseconds in the table. */
        public final double jsonScale;

        Figure(String column, String title, ToDoubleFunction<Sample> of, boolean lowerIsBetter, String key,
                double jsonScale) {
            this.column = column;
            this.title = title;
            this.of = of;
            this.lowerIsBetter = lowerIsBetter;
            this.key = key;
            this.jsonScale = jsonScale;
        }

        /** snake_case name for JSON (times in nanoseconds, as every --json). */
        public String key() {
            return key;
        }
    }

    public CompareResult {
        samples = List.copyOf(samples);
    }

    /** The samples of {@code candidate}, by round. */
    public List<Sample> of(String candidate) {
        List<Sample> out = new ArrayList<>();
        for (Sample s : samples) {
            if (s.candidate().equals(candidate)) {
                out.add(s);
            }
        }
        return out;
    }

    /** The median of {@code figure} over {@code candidate}'s rounds. */
    public double median(String candidate, Figure figure) {
        List<Double> values = new ArrayList<>();
        for (Sample s : of(candidate)) {
            values.add(figure.of.applyAsDouble(s));
        }
        return ComparePlan.median(values);
    }

    /** Per candidate, figure to median. */
    public Map<String, Map<Figure, Double>> medians() {
        Map<String, Map<Figure, Double>> out = new LinkedHashMap<>();
        for (String c : plan.candidates()) {
            Map<Figure, Double> m = new LinkedHashMap<>();
            for (Figure f : Figure.values()) {
                m.put(f, median(c, f));
            }
            out.put(c, m);
        }
        return out;
    }

    /** The errors of every run, "round R, CANDIDATE: error". */
    public List<String> errors() {
        List<String> out = new ArrayList<>();
        for (Sample s : samples) {
            for (String e : s.errors()) {
                out.add("round " + (s.round() + 1) + ", " + s.candidate() + ": " + e);
            }
        }
        return out;
    }
}
