package io.kickplug.guest.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One seed experiment of {@code kp:bench seeds}: what the source document published, every measured point
 * with the parameters it ran with, the measured figures comparable to the published ones, and whether the
 * measured effect has the published direction.
 *
 * @param id the seed's number, "000" to "004"
 * @param title what is compared
 * @param published the published figure as one line of text
 * @param publishedFigures the published figures by name (numbers)
 * @param rule how {@code directionMatches} is decided, one line
 * @param points every measured point, in the order they ran
 * @param measured the measured figure comparable to {@code published}, as one line of text
 * @param measuredFigures the measured figures by name (numbers; NaN when not measurable)
 * @param directionMatches whether the measured effect has the published direction; {@code null} when the
 *     comparison was not run (a variant it needs was not bound, so another ran in its place)
 * @param notes remarks a reader needs (a strategy that was not bound, a fallback), possibly empty
 * @param magnitudeRatio the measured effect over the published one in the same measure: a change over the
 *     published change (an IOPS ratio r counts as the gain r - 1, a percent change as itself); NaN when not
 *     measurable
 * @param clock how the seed ran: "virtual time (...)" or "real threads (...)", with the reason
 * @param effectRounds the effect ({@link SeedEffects}) within each round, round by round: the configurations' runs
 *     of one round side by side (they ran one after the other); empty when the seed did not run in rounds
 */
public record SeedResult(String id, String title, String published, Map<String, Double> publishedFigures,
        String rule, List<Point> points, String measured, Map<String, Double> measuredFigures,
        Boolean directionMatches, List<String> notes, double magnitudeRatio, String clock, List<Double> effectRounds) {

    /** Without the effect of each round. */
    public SeedResult(String id, String title, String published, Map<String, Double> publishedFigures,
            String rule, List<Point> points, String measured, Map<String, Double> measuredFigures,
            Boolean directionMatches, List<String> notes, double magnitudeRatio, String clock) {
        this(id, title, published, publishedFigures, rule, points, measured, measuredFigures, directionMatches, notes,
                magnitudeRatio, clock, List.of());
    }

    /** Without a magnitude or a clock (NaN, "real threads"). */
    public SeedResult(String id, String title, String published, Map<String, Double> publishedFigures,
            String rule, List<Point> points, String measured, Map<String, Double> measuredFigures,
            Boolean directionMatches, List<String> notes) {
        this(id, title, published, publishedFigures, rule, points, measured, measuredFigures, directionMatches, notes,
                Double.NaN, "real threads");
    }

    /** This result with its magnitude ratio and clock. */
    public SeedResult with(double magnitude, String how) {
        return new SeedResult(id, title, published, publishedFigures, rule, points, measured, measuredFigures,
                directionMatches, notes, magnitude, how, effectRounds);
    }

    /**
     * This result with the effect of each round. With two rounds or more the verdict reads them
     * ({@link SeedSpread}): the magnitude is the median round's effect over the published one, and the direction
     * that median's (a comparison that was not run stays not run).
     */
    public SeedResult withEffectRounds(List<Double> rounds) {
        SeedSpread spread = SeedSpread.of(rounds, SeedEffects.published(id));
        if (!spread.measured()) {
            return new SeedResult(id, title, published, publishedFigures, rule, points, measured, measuredFigures,
                    directionMatches, notes, magnitudeRatio, clock, rounds);
        }
        double median = spread.median();
        Boolean direction = directionMatches == null ? null
                : Math.signum(median) == Math.signum(spread.published()) && median != 0;
        return new SeedResult(id, title, published, publishedFigures, rule, points, measured, measuredFigures,
                direction, notes, median / spread.published(), clock, rounds);
    }

    /** The effect over the rounds and whether they agree ({@link SeedSpread}). */
    public SeedSpread spread() {
        return SeedSpread.of(effectRounds, SeedEffects.published(id));
    }

    /** Whether the rounds disagree on the verdict ({@link SeedSpread#unstable}); never for a comparison not run. */
    public boolean unstable() {
        return directionMatches != null && spread().unstable();
    }

    /**
     * Whether the measured effect is within a factor of 2 of the published one: same sign, and
     * {@code 0.5 <= magnitudeRatio <= 2}; {@code null} when not measurable, not run, or {@link #unstable}.
     */
    public Boolean withinTwoX() {
        return unstable() ? null : SeedVerdicts.withinTwoX(directionMatches, magnitudeRatio);
    }

    /** "matches", "differs", "unstable" (the rounds disagree: {@link #unstable}) or "not run". */
    public String verdict() {
        return unstable() ? SeedVerdicts.UNSTABLE : SeedVerdicts.verdict(directionMatches);
    }

    public SeedResult {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(clock, "clock");
        publishedFigures = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(publishedFigures));
        measuredFigures = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(measuredFigures));
        points = List.copyOf(points);
        notes = List.copyOf(notes);
        effectRounds = List.copyOf(effectRounds);
    }

    /**
     * One measured run.
     *
     * @param label what varies at this point, e.g. "under-lock" or "defer-call iodepth 64"
     * @param params every parameter it ran with, in print order (vcpus, numjobs, iodepth, bs, rw, ...)
     * @param figures what it measured, in print order (iops, irqs/req, hold-max-us, ...)
     */
    public record Point(String label, Map<String, String> params, Map<String, Double> figures) {

        public Point {
            Objects.requireNonNull(label, "label");
            params = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(params));
            figures = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(figures));
        }
    }
}
