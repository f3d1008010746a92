package io.kickplug.guest.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A seed's effect over its interleaved rounds ({@link SeedResult#effectRounds}), each round's effect taken from the
 * configurations' runs of that round side by side, and whether the rounds agree on the verdict.
 *
 * <p>The verdict reads the median of the rounds' effects: a slow spell of the host or a change of the JIT's code
 * between rounds moves both configurations of a round alike, so their ratio holds where the absolute IOPS drift (seed
 * 004's yielding lock was seen at 2.01M-4.56M IOPS within one run). The rounds disagree, and the seed is
 * <em>unstable</em> rather than a match or a miss, when some rounds point the published way and others do not
 * ({@link #directionFlips}), or when they fall on both sides of an edge of the 2x band, [published / 2,
 * published * 2] ({@link #spansBand}): then one run's verdict would be whichever round came out in the middle.
 *
 * @param rounds the finite effects, in the order the rounds ran
 * @param published the published effect in the same measure ({@link SeedEffects#published})
 */
public record SeedSpread(List<Double> rounds, double published) {

    public SeedSpread {
        rounds = List.copyOf(rounds);
    }

    /** The spread of {@code effectRounds} (NaN rounds left out) against {@code published}. */
    public static SeedSpread of(List<Double> effectRounds, double published) {
        return new SeedSpread(effectRounds.stream().filter(Double::isFinite).toList(), published);
    }

    /** Whether there are rounds to judge: two or more finite ones, and a published effect to compare with. */
    public boolean measured() {
        return rounds.size() >= 2 && Double.isFinite(published) && published != 0;
    }

    public double min() {
        return rounds.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    public double max() {
        return rounds.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    /** The median round's effect (of an even count, the mean of the middle two); NaN without rounds. */
    public double median() {
        if (rounds.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted = new ArrayList<>(rounds);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /** The smallest magnitude ratio of a round (effect over published); for a negative published effect, of the max. */
    public double ratioMin() {
        return Math.min(min() / published, max() / published);
    }

    public double ratioMax() {
        return Math.max(min() / published, max() / published);
    }

    /** Rounds whose effect has the published sign. */
    public int matching() {
        return (int) rounds.stream().filter(this::matches).count();
    }

    /** Rounds within 2x: the published sign and half to twice the published effect, bounds included. */
    public int within() {
        return (int) rounds.stream().filter(r -> band(r) == 0).count();
    }

    /** Some rounds point the published way and some do not. */
    public boolean directionFlips() {
        int m = matching();
        return measured() && m > 0 && m < rounds.size();
    }

    /**
     * The rounds fall on both sides of an edge of the 2x band: some within it and some outside, or some below it and
     * some above.
     */
    public boolean spansBand() {
        return measured() && rounds.stream().mapToInt(this::band).distinct().count() > 1;
    }

    /** The rounds disagree on the verdict: {@link #directionFlips} or {@link #spansBand}. */
    public boolean unstable() {
        return directionFlips() || spansBand();
    }

    /** Why the rounds disagree, one phrase ("" when they agree). */
    public String reason() {
        if (directionFlips()) {
            return String.format(Locale.ROOT, "the direction flips between rounds (%d of %d the published way)",
                    matching(), rounds.size());
        }
        if (spansBand()) {
            return String.format(Locale.ROOT, "the rounds span an edge of the 2x band (%.2fx to %.2fx, %d of %d within)",
                    ratioMin(), ratioMax(), within(), rounds.size());
        }
        return "";
    }

    private boolean matches(double effect) {
        return Math.signum(effect) == Math.signum(published) && effect != 0;
    }

    /** -1 below the band (or the other way), 0 within, 1 above it. */
    private int band(double effect) {
        if (!matches(effect)) {
            return -1;
        }
        double ratio = effect / published;
        return ratio < 0.5 ? -1 : ratio > 2 ? 1 : 0;
    }
}
