package io.kickplug.guest.bench;

import io.kickplug.guest.engine.Charging;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.guest.engine.VirtualTime;
import java.util.ArrayList;
import java.util.List;

/**
 * The runs a {@code kp:bench seeds} run makes, in the order {@link SeedsBench} makes them: per seed its discarded
 * warm-ups, then every configuration once per round (seed 001's once). {@link SeedsBench} takes its exit costs and
 * iodepths from here too, so the plan and the run cannot drift apart; {@link SeedProgress} estimates the remaining
 * time against it ({@link SeedCosts}).
 */
final class SeedPlan {

    private SeedPlan() {
    }

    /**
     * One run of a point.
     *
     * @param seed the seed's id
     * @param variant what the run measures, as the progress line names it without the round ("under-lock exit 1us
     *     ioeventfd off", "bh iodepth 64", "mutex"); a warm-up's starts with "warm-up "
     * @param virtualNanos fio's runtime for the run (virtual time when the seed runs in virtual time)
     */
    record Step(String seed, String variant, long virtualNanos) {

        static final String WARM_UP = "warm-up ";

        boolean warmUp() {
            return variant.startsWith(WARM_UP);
        }
    }

    /** Seed 000's exit costs in ns: 1, 10 and 50 us; with {@code --quick} only the largest, where the verdict is. */
    static List<Long> exits000(SeedsOptions o) {
        List<Long> all = SeedsBench.SEED000_EXIT_US.stream().map(us -> us * 1000).toList();
        return o.quick() ? List.of(all.get(all.size() - 1)) : all;
    }

    /**
     * Seed 000's ioeventfd settings, the verdict's first: off (the seed's host) when it can run off, then on; with
     * {@code --quick} only the verdict's.
     *
     * @param offRuns whether ioeventfd off can run (virtual time, or the runtime's I/O thread service)
     */
    static List<Boolean> ioeventfds000(SeedsOptions o, boolean offRuns) {
        List<Boolean> all = offRuns ? List.of(false, true) : List.of(true);
        return o.quick() ? all.subList(0, 1) : all;
    }

    /** Seed 002's iodepths: 64 (the verdict's) and 1; with {@code --quick} 64 only. */
    static List<Integer> iodepths002(SeedsOptions o) {
        return o.quick() ? List.of(64) : List.of(64, 1);
    }

    /**
     * Seed 002's notification strategies: immediate, bh and defer-call; with {@code --quick} the verdict's two,
     * immediate and defer-call (bh, the mechanism the series removed, stands beside them in a full run).
     */
    static List<String> strategies002(SeedsOptions o) {
        return o.quick() ? List.of(CompletionNotifier.IMMEDIATE, "defer-call") : SeedsBench.STRATEGIES;
    }

    /**
     * The strategies seed 002 warms up: the first (immediate) in a full run; with {@code --quick} each, since a
     * round of 0.1 s is too short to pay for its strategy's first compilation and the lower of two rounds stands
     * for it.
     */
    static List<String> warmUps002(SeedsOptions o) {
        if (!warmsUp(o, "002")) {
            return List.of();
        }
        return o.quick() ? strategies002(o) : strategies002(o).subList(0, 1);
    }

    /** Seed 004's lock kinds: yielding, mutex and sharded; with {@code --quick} the verdict's two, yielding and mutex. */
    static List<TrackedLockKind> lockKinds004(SeedsOptions o) {
        return o.quick() ? List.of(TrackedLockKind.YIELDING, TrackedLockKind.MUTEX) : SeedsBench.LOCK_KINDS;
    }

    /** A warm-up's runtime: the point's, at most {@link SeedsBench#MAX_WARMUP_NANOS}. */
    static long warmUpNanos(long runtime) {
        return Math.min(runtime, SeedsBench.MAX_WARMUP_NANOS);
    }

    /** A round's runtime: the point's runtime shared among its rounds. */
    static long roundNanos(SeedsOptions o) {
        return Math.max(1, o.runtimeNanos() / o.rounds());
    }

    /** A round's runtime of seed {@code id}: its runtime ({@link SeedsOptions#runtimeOf}) shared among its rounds. */
    static long roundNanos(SeedsOptions o, String id) {
        return Math.max(1, o.runtimeOf(id) / o.rounds());
    }

    /**
     * Whether seed {@code id} runs its discarded warm-ups: not when its charging is the model's, where nothing of the
     * host's code is measured, so a cold JIT costs wall time and no virtual time (seed 001, always model-charged in
     * virtual time, warms up as before when {@code --charging measured} asks for measured charging).
     */
    static boolean warmsUp(SeedsOptions o, String id) {
        return o.clock().equals(SeedsOptions.REAL) || o.chargingOf(id) != Charging.MODEL;
    }

    /** The variant without the " round 2/3" tag {@link SeedRounds#interleave} adds to it. */
    static String variant(String label) {
        return label.replaceFirst(" round \\d+/\\d+$", "");
    }

    /**
     * Every run of {@code o}'s seeds in order.
     *
     * @param offRuns whether seed 000's ioeventfd off can run ({@link #ioeventfds000})
     */
    static List<Step> of(SeedsOptions o, boolean offRuns) {
        List<Step> steps = new ArrayList<>();
        if (o.runs("000")) {
            long warm = warmUpNanos(o.runtimeOf("000"));
            long round = roundNanos(o, "000");
            List<Long> exits = exits000(o);
            List<Boolean> ioeventfds = ioeventfds000(o, offRuns);
            for (String policy : warmsUp(o, "000") ? KickBench.POLICIES : List.<String>of()) {
                steps.add(new Step("000", Step.WARM_UP + label000(policy, exits.get(0), ioeventfds.get(0)), warm));
            }
            for (boolean ioeventfd : ioeventfds) {
                List<Long> here = ioeventfd && ioeventfds.size() > 1 ? exits.subList(exits.size() - 1, exits.size())
                        : exits;
                for (long exit : here) {
                    rounds(steps, o, "000", round, KickBench.POLICIES.stream()
                            .map(policy -> label000(policy, exit, ioeventfd)).toList());
                }
            }
        }
        if (o.runs("001")) {
            long runtime = o.runtimeOf("001");
            for (String policy : warmsUp(o, "001") ? KickBench.POLICIES : List.<String>of()) {
                steps.add(new Step("001", Step.WARM_UP + policy, warmUpNanos(runtime)));
            }
            for (String policy : KickBench.POLICIES) {
                steps.add(new Step("001", policy, runtime));
            }
        }
        if (o.runs("002")) {
            long warm = warmUpNanos(o.runtimeOf("002"));
            long round = roundNanos(o, "002");
            List<Integer> depths = iodepths002(o);
            List<String> strategies = strategies002(o);
            for (String strategy : warmUps002(o)) {
                steps.add(new Step("002", Step.WARM_UP + label002(strategy, depths.get(0)), warm));
            }
            for (int iodepth : depths) {
                rounds(steps, o, "002", round, strategies.stream().map(s -> label002(s, iodepth)).toList());
            }
        }
        if (o.runs("003")) {
            long warm = warmUpNanos(o.runtimeOf("003"));
            for (boolean hipri : warmsUp(o, "003") ? List.of(false, true) : List.<Boolean>of()) {
                steps.add(new Step("003", Step.WARM_UP + label003(hipri), warm));
            }
            rounds(steps, o, "003", roundNanos(o, "003"), List.of(label003(false), label003(true)));
        }
        if (o.runs("004")) {
            long warm = warmUpNanos(o.runtimeOf("004"));
            for (TrackedLockKind kind : warmsUp(o, "004") ? lockKinds004(o) : List.<TrackedLockKind>of()) {
                steps.add(new Step("004", Step.WARM_UP + kind.label(), warm));
            }
            rounds(steps, o, "004", roundNanos(o, "004"), lockKinds004(o).stream().map(TrackedLockKind::label)
                    .toList());
        }
        return steps;
    }

    /** The measured runs of {@code o} (warm-ups not counted). */
    static int points(SeedsOptions o) {
        return (int) of(o, true).stream().filter(s -> !s.warmUp()).count();
    }

    /** Interleaved: every variant once per round, in the order {@link SeedRounds#interleave} runs them. */
    private static void rounds(List<Step> steps, SeedsOptions o, String seed, long nanos, List<String> variants) {
        for (int r = 1; r <= o.rounds(); r++) {
            for (String v : SeedRounds.order(variants, r)) {
                steps.add(new Step(seed, v, nanos));
            }
        }
    }

    static String label000(String policy, long exitNanos, boolean ioeventfd) {
        return policy + " exit " + exitNanos / 1000 + "us ioeventfd " + (ioeventfd ? "on" : "off");
    }

    static String label002(String strategy, int iodepth) {
        return strategy + " iodepth " + iodepth;
    }

    static String label003(boolean hipri) {
        return "hipri=" + (hipri ? 1 : 0);
    }
}
