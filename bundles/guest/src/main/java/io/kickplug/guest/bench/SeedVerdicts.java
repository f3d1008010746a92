package io.kickplug.guest.bench;

import java.util.SortedMap;

/**
 * The direction logic of {@code kp:bench seeds}: whether a measured effect points the way the source
 * document's did. Only the sign is judged, never the size (the host is a different machine, shared and
 * noisy); a missing or zero baseline never matches.
 */
public final class SeedVerdicts {

    private SeedVerdicts() {
    }

    /**
     * Whether a measured effect is within a factor of 2 of the published one: same sign ({@code directionMatches})
     * and {@code 0.5 <= magnitudeRatio <= 2}; {@code null} when not run or not measurable.
     */
    public static Boolean withinTwoX(Boolean directionMatches, double magnitudeRatio) {
        if (directionMatches == null || Double.isNaN(magnitudeRatio) || Double.isInfinite(magnitudeRatio)) {
            return null;
        }
        return magnitudeRatio >= 0.5 && magnitudeRatio <= 2;
    }

    /** A verdict whose rounds disagree ({@link SeedSpread#unstable}): neither a match nor a miss. */
    public static final String UNSTABLE = "unstable";

    /** "matches", "differs" or "not run" ({@code directionMatches} null). */
    public static String verdict(Boolean directionMatches) {
        return directionMatches == null ? "not run" : directionMatches ? "matches" : "differs";
    }

    /** {@code after / before}, or NaN when {@code before} is not positive or either is not a number. */
    public static double ratio(double before, double after) {
        if (!(before > 0) || Double.isNaN(after)) {
            return Double.NaN;
        }
        return after / before;
    }

    /** The change from {@code before} to {@code after} in percent (+9 for 1.09x), NaN as {@link #ratio}. */
    public static double percent(double before, double after) {
        return (ratio(before, after) - 1) * 100;
    }

    /** Whether {@code after} is larger than {@code before} (a gain: IOPS). */
    public static boolean increased(double before, double after) {
        return ratio(before, after) > 1;
    }

    /** Whether {@code after} is smaller than {@code before} (a reduction: lock hold or wait times). */
    public static boolean decreased(double before, double after) {
        double r = ratio(before, after);
        return r < 1;
    }

    /**
     * Seed 000: outside-lock beats under-lock at the largest exit cost measured (the seed's host, qemu-kvm on
     * 2014 arm64, had expensive exits; at a cheap exit the effect is expected to shrink towards 1).
     *
     * @param ratiosByExitNs IOPS outside-lock / under-lock by exit latency
     */
    public static boolean seed000(SortedMap<Long, Double> ratiosByExitNs) {
        return !ratiosByExitNs.isEmpty() && ratiosByExitNs.get(ratiosByExitNs.lastKey()) > 1;
    }

    /** Seed 001: the vq lock's largest hold time and its total wait time both went down outside the lock. */
    public static boolean seed001(double holdMaxUnder, double holdMaxOutside, double waitTotalUnder,
            double waitTotalOutside) {
        return decreased(holdMaxUnder, holdMaxOutside) && decreased(waitTotalUnder, waitTotalOutside);
    }

    /** Seed 002: defer-call beats bh at iodepth 64 (the iodepth 1 figure, ~-1%, was called noise). */
    public static boolean seed002(double bhIops64, double deferCallIops64) {
        return increased(bhIops64, deferCallIops64);
    }

    /** Seed 003: polled (hipri=1) beats interrupt-driven (hipri=0) completion. */
    public static boolean seed003(double hipri0Iops, double hipri1Iops) {
        return increased(hipri0Iops, hipri1Iops);
    }

    /** Seed 004: the mutex beats the yielding (coroutine) lock. */
    public static boolean seed004(double yieldingIops, double mutexIops) {
        return increased(yieldingIops, mutexIops);
    }
}
