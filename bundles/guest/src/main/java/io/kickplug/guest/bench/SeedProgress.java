package io.kickplug.guest.bench;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * A progress line per run on stderr: seed, point (or warm-up), elapsed, and the remaining time estimated from the
 * measured duration of the runs so far ({@link SeedEstimate} against the run's {@link SeedPlan}).
 */
final class SeedProgress {
    private final int total;
    private final LongSupplier clock;
    private final long start;
    private final PrintStream out;
    private final SeedEstimate estimate;
    private int done;
    /** The run begun last: its seed, expected cost and start. */
    private String runningSeed;
    private double runningCost;
    private long runningSince;

    SeedProgress(List<SeedPlan.Step> plan) {
        this(plan, System::nanoTime, System.err);
    }

    /** @param clock nanoseconds, as {@link System#nanoTime} */
    SeedProgress(List<SeedPlan.Step> plan, LongSupplier clock, PrintStream out) {
        this.total = (int) plan.stream().filter(s -> !s.warmUp()).count();
        this.clock = clock;
        this.start = clock.getAsLong();
        this.out = out;
        Map<String, Double> bySeed = new LinkedHashMap<>();
        plan.forEach(s -> bySeed.merge(s.seed(), SeedCosts.seconds(s), Double::sum));
        this.estimate = new SeedEstimate(bySeed);
    }

    /**
     * A run begins: prints its line.
     *
     * @param label the point as the report names it, with its round; a warm-up's starts with "warm-up "
     * @param virtualNanos its fio runtime
     */
    void begin(String seed, String label, long virtualNanos) {
        runningSince = clock.getAsLong();
        double elapsed = (runningSince - start) / 1e9;
        SeedPlan.Step step = new SeedPlan.Step(seed, SeedPlan.variant(label), virtualNanos);
        runningSeed = seed;
        runningCost = SeedCosts.seconds(step);
        String what = step.warmUp() ? label : String.format(Locale.ROOT, "point %d/%d (%s)", done + 1, total, label);
        out.printf(Locale.ROOT, "kp:bench seeds: seed %s %s, elapsed %ds, remaining ~%ds%n", seed, what,
                Math.round(elapsed), Math.round(estimate.remainingSeconds(elapsed)));
        if (!step.warmUp()) {
            done++;
        }
    }

    /** The run begun last has ended. */
    void end() {
        if (runningSeed != null) {
            estimate.done(runningSeed, runningCost, Math.max(0, clock.getAsLong() - runningSince) / 1e9);
            runningSeed = null;
        }
    }
}
