package io.kickplug.guest.bench;

import java.util.Map;

/**
 * Each seed's effect in the measure its magnitude ratio uses ({@link SeedResult#magnitudeRatio}: the measured effect
 * over the published one): the published effect, what the measure is, and its unit. The HTML report's bars and the
 * JSON file's {@code "effect"} member both come from here.
 */
public final class SeedEffects {

    /** An effect that is a percent change. */
    public static final String PERCENT = "percent";
    /** An effect that is a ratio minus one (an IOPS ratio r counts as the gain r - 1). */
    public static final String GAIN = "gain";

    private static final Map<String, Double> PUBLISHED = Map.of("000", 34.0 / 14.0 - 1, "001", -93.0, "002", 9.0,
            "003", 20.0, "004", 517.0 / 254.0 - 1);
    private static final Map<String, String> MEASURE = Map.of(
            "000", "IOPS gain outside-lock over under-lock (ratio - 1)",
            "001", "max hold time change, %",
            "002", "IOPS change defer-call vs immediate at iodepth 64, %",
            "003", "IOPS change hipri=1 vs hipri=0, %",
            "004", "IOPS gain mutex over yielding (ratio - 1)");
    private static final Map<String, String> UNIT = Map.of("000", GAIN, "001", PERCENT, "002", PERCENT, "003", PERCENT,
            "004", GAIN);

    private SeedEffects() {
    }

    /** Seed {@code id}'s published effect, or NaN for an unknown seed. */
    public static double published(String id) {
        return PUBLISHED.getOrDefault(id, Double.NaN);
    }

    /** What seed {@code id}'s effect measures, or null for an unknown seed. */
    public static String measure(String id) {
        return MEASURE.get(id);
    }

    /** {@link #PERCENT} or {@link #GAIN}, or null for an unknown seed. */
    public static String unit(String id) {
        return UNIT.get(id);
    }

    /** The measured effect: the published one times the magnitude ratio (NaN when either is not known). */
    public static double measured(SeedResult s) {
        return published(s.id()) * s.magnitudeRatio();
    }
}
