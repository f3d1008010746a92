package io.kickplug.guest.bench;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What each run of {@code kp:bench seeds} costs in wall time on a reference machine: a set-up per run plus its fio
 * runtime times its configuration's wall seconds per runtime second. The costs differ by two orders of magnitude
 * between configurations (in virtual time a run costs what the simulated I/Os cost the host, not its runtime): a
 * seed 000 point at 50 us exits with ioeventfd off costs half a second per runtime second, a seed 004 point a minute
 * and more. {@link SeedEstimate} takes only their shape from here and scales it by the run's own measured time.
 *
 * <p>Reference: the 2-core machine the project is developed on, default options (virtual time, measured charging,
 * actors alone on CPU 1), 2026-12-06; each figure is the mean over the rounds of two full default runs (1729 s and
 * 1434 s of wall time) of a configuration's wall seconds per runtime second, after the set-up. Other builds and
 * benchmarks shared the machine (load average 5 to 32 on its 2 cores), and the two runs' figures differ by up to
 * 2.3x per configuration (seed 004 yielding: 89 and 39): they are a shape, not a promise. Seeds 000, 002 and 003
 * run under model charging by default ({@link SeedsOptions#MODEL_CHARGING_SEEDS}), which costs more wall time per
 * runtime second (each modelled cost hands the baton over): their figures are from one {@code --only N --charging
 * model --runtime 1} run each on the same machine, 2026-12-06, at load average 10 to 39, the rounds' wall seconds
 * less the set-up, per runtime second. Seed 004 runs under model charging by default too (0.1 s per round, no
 * warm-ups), and its points cost more there than these measured-charging figures: 111 (yielding), 168 (mutex) and 185
 * (sharded) wall seconds per runtime second in one default run at load average 15 to 35, whose 59 points took 351 s
 * from launch to exit; the figures are kept, since the recorded runs {@code SeedEstimateTest} replays are
 * measured-charging runs.
 */
final class SeedCosts {

    /** Per run, whatever its runtime: attach the disk, boot the machine, detach (runs of {@code --runtime 0.01}). */
    static final double SETUP_SECONDS = 0.2;

    /** Wall seconds per second of fio runtime, per seed and configuration (a warm-up costs as its configuration). */
    static final Map<String, Double> WALL_PER_RUNTIME_SECOND = Map.ofEntries(
            Map.entry("000 under-lock exit 1us ioeventfd off", 35.4),
            Map.entry("000 outside-lock exit 1us ioeventfd off", 42.4),
            Map.entry("000 under-lock exit 10us ioeventfd off", 12.4),
            Map.entry("000 outside-lock exit 10us ioeventfd off", 27.4),
            Map.entry("000 under-lock exit 50us ioeventfd off", 10.4),
            Map.entry("000 outside-lock exit 50us ioeventfd off", 21.4),
            Map.entry("000 under-lock exit 50us ioeventfd on", 19.4),
            Map.entry("000 outside-lock exit 50us ioeventfd on", 71.4),
            Map.entry("001 under-lock", 3.9),
            Map.entry("001 outside-lock", 11.2),
            Map.entry("002 immediate iodepth 64", 15.4),
            Map.entry("002 bh iodepth 64", 40.4),
            Map.entry("002 defer-call iodepth 64", 44.4),
            Map.entry("002 immediate iodepth 1", 72.4),
            Map.entry("002 bh iodepth 1", 50.4),
            Map.entry("002 defer-call iodepth 1", 68.4),
            Map.entry("003 hipri=0", 46.4),
            Map.entry("003 hipri=1", 45.4),
            Map.entry("004 yielding", 64.0),
            Map.entry("004 mutex", 79.0),
            Map.entry("004 sharded", 115.0));

    /**
     * A default run's expected wall time in minutes ({@link #seconds} of its plan), for {@code BenchCommand}'s
     * {@code @Descriptor}, which takes only a constant; {@code SeedEstimateTest} checks it against the plan.
     */
    static final int DEFAULT_RUN_MINUTES = 5;
    /** A {@code --quick} run's expected wall time in seconds, as {@link #DEFAULT_RUN_MINUTES}. */
    static final int QUICK_RUN_SECONDS = 72;

    /** A configuration not in the table (seed 000 in real threads without ioeventfd off) costs its seed's mean. */
    private static final Map<String, Double> SEED_MEAN = WALL_PER_RUNTIME_SECOND.entrySet().stream()
            .collect(Collectors.groupingBy(e -> e.getKey().substring(0, 3),
                    Collectors.averagingDouble(Map.Entry::getValue)));

    private SeedCosts() {
    }

    /** The expected wall seconds of {@code step} on the reference machine. */
    static double seconds(SeedPlan.Step step) {
        String variant = step.warmUp() ? step.variant().substring(SeedPlan.Step.WARM_UP.length()) : step.variant();
        Double perSecond = WALL_PER_RUNTIME_SECOND.get(step.seed() + " " + variant);
        if (perSecond == null) {
            perSecond = SEED_MEAN.getOrDefault(step.seed(), 0.0);
        }
        return SETUP_SECONDS + perSecond * step.virtualNanos() / 1e9;
    }

    /**
     * What a default and a {@code --quick} run make and how long they take on the reference machine, computed from
     * their plans: "a default run: 59 points and 10 warm-ups, 73 s of runtime, about 29 min; --quick: ...".
     */
    static String describe() {
        return "a default run: " + describe(SeedPlan.of(SeedsOptions.parse(List.of()), true)) + "; --quick: "
                + describe(SeedPlan.of(SeedsOptions.parse(List.of("--quick")), true))
                + " (on a 2-core machine shared with builds)";
    }

    /** "59 points and 10 warm-ups, 73 s of runtime, about 29 min" (seconds below 3 minutes). */
    static String describe(List<SeedPlan.Step> plan) {
        long warmUps = plan.stream().filter(SeedPlan.Step::warmUp).count();
        double runtime = plan.stream().mapToLong(SeedPlan.Step::virtualNanos).sum() / 1e9;
        double wall = seconds(plan);
        return String.format(java.util.Locale.ROOT, "%d points and %d warm-ups, %.0f s of runtime, about %s",
                plan.size() - warmUps, warmUps, runtime, wall < 180 ? Math.round(wall) + " s"
                        : Math.round(wall / 60) + " min");
    }

    /** The expected wall seconds of every step of {@code plan}. */
    static double seconds(List<SeedPlan.Step> plan) {
        return plan.stream().mapToDouble(SeedCosts::seconds).sum();
    }
}
