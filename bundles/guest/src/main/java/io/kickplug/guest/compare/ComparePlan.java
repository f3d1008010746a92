package io.kickplug.guest.compare;

import java.util.ArrayList;
import java.util.List;

/**
 * The order of a comparison's runs: round after round, each round running every candidate once in the order given
 * (A B C A B C ...), so that a drift of the machine (another process starting, the CPU heating) touches every
 * candidate alike instead of the last ones. Plain; {@link #steps} is the whole schedule.
 *
 * @param candidates what is compared, each named once
 * @param rounds how many times each one runs
 */
public record ComparePlan(List<String> candidates, int rounds) {

    /** One run: round {@code round} (0-based) of {@code candidate}. */
    public record Step(int round, String candidate) {
    }

    public ComparePlan {
        candidates = List.copyOf(candidates);
        if (candidates.isEmpty()) {
            throw new IllegalArgumentException("nothing to compare");
        }
        if (candidates.stream().distinct().count() != candidates.size()) {
            throw new IllegalArgumentException("a candidate is named twice: " + String.join(",", candidates));
        }
        if (rounds < 1) {
            throw new IllegalArgumentException("rounds must be 1 or more: " + rounds);
        }
    }

    /** Every run, in the order they run. */
    public List<Step> steps() {
        List<Step> out = new ArrayList<>(rounds * candidates.size());
        for (int r = 0; r < rounds; r++) {
            for (String c : candidates) {
                out.add(new Step(r, c));
            }
        }
        return out;
    }

    /**
     * The median of {@code values}: the middle one, or the mean of the two middle ones for an even count; NaN
     * values (a figure a run could not give) are left out, and NaN comes back when none is left.
     */
    public static double median(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).filter(d -> !Double.isNaN(d)).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        int mid = v.length / 2;
        return v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
    }
}
