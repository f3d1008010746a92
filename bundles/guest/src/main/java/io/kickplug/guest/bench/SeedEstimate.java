package io.kickplug.guest.bench;

import java.util.HashMap;
import java.util.Map;

/**
 * The remaining time of a {@code kp:bench seeds} run, from the measured duration of the runs so far.
 *
 * <p>Every planned run has an expected cost ({@link SeedCosts}: its wall time on a reference machine). Those costs
 * give the shape of the run, which runs cost more than others (a seed 004 point costs about a hundred times a seed
 * 000 point at 50 us); the scale is this run's own, measured:
 * <ul>
 * <li>the run's ratio: the time elapsed over the expected cost of the runs done, so a machine twice as slow, or
 * twice as loaded, doubles the estimate after the first run (before any run has ended it is 1: the reference
 * machine's time);</li>
 * <li>a seed's ratio, for the seed's runs still to come: its runs' measured time over their expected cost, with
 * {@link #PRIOR_SECONDS} of expected cost at the run's ratio added, so one short run does not decide it. The
 * reference costs were measured on a shared machine whose load moved the seeds against each other (seed 001 runs on
 * model charging, its wall time follows the load; seed 004's took 39 to 89 s per runtime second in two runs): a
 * seed's own ratio corrects its shape once its first runs are measured.</li>
 * </ul>
 * A seed's remaining runs then cost their expected cost times the seed's ratio, and a seed not started yet the run's
 * ratio. A run that is not in the plan (a clock the plan did not foresee) counts as measured; a seed's remaining
 * time never goes below zero.
 */
final class SeedEstimate {

    /**
     * How much expected cost, at the run's ratio, a seed's own ratio starts from: 30 s, a few of its runs (tried
     * against two recorded runs: 10 s and 100 s gave the same halfway estimates within 10%).
     */
    static final double PRIOR_SECONDS = 30;

    private final Map<String, Double> planned;
    private final Map<String, Double> doneCost = new HashMap<>();
    private final Map<String, Double> doneSeconds = new HashMap<>();
    private double totalDoneCost;

    /** @param plannedCost the expected cost of every planned run per seed, in reference seconds */
    SeedEstimate(Map<String, Double> plannedCost) {
        for (Map.Entry<String, Double> e : plannedCost.entrySet()) {
            finite(e.getValue(), "planned cost of " + e.getKey());
        }
        this.planned = Map.copyOf(plannedCost);
    }

    /** A run of {@code seed} of expected cost {@code cost} (reference seconds) has ended after {@code seconds}. */
    void done(String seed, double cost, double seconds) {
        finite(cost, "cost");
        finite(seconds, "seconds");
        doneCost.merge(seed, cost, Double::sum);
        doneSeconds.merge(seed, seconds, Double::sum);
        totalDoneCost += cost;
    }

    /** The run's ratio: the time elapsed over the expected cost of the runs done; 1 before any. */
    double scale(double elapsedSeconds) {
        return totalDoneCost > 0 ? elapsedSeconds / totalDoneCost : 1;
    }

    /** {@code seed}'s ratio for its runs still to come, given the run's. */
    double seedScale(String seed, double runScale) {
        double cost = doneCost.getOrDefault(seed, 0.0);
        return (doneSeconds.getOrDefault(seed, 0.0) + PRIOR_SECONDS * runScale) / (cost + PRIOR_SECONDS);
    }

    /**
     * The remaining seconds after {@code elapsedSeconds} of wall time, in which the runs reported by {@link #done}
     * ran.
     */
    double remainingSeconds(double elapsedSeconds) {
        double run = scale(elapsedSeconds);
        double remaining = 0;
        for (Map.Entry<String, Double> e : planned.entrySet()) {
            double left = Math.max(0, e.getValue() - doneCost.getOrDefault(e.getKey(), 0.0));
            remaining += left * seedScale(e.getKey(), run);
        }
        return remaining;
    }

    private static void finite(double value, String what) {
        if (!(value >= 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(what + " must be finite and >= 0: " + value);
        }
    }
}
