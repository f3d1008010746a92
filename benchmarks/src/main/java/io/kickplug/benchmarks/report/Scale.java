package io.kickplug.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A linear axis: values from {@code lo} to {@code hi} onto pixels from {@code near} (where {@code lo} goes) to
 * {@code far}. {@link #covering} widens a range to round tick steps (1, 2, 2.5 or 5 times a power of ten). StrictMath
 * throughout, so every JVM computes the same pixels.
 */
record Scale(double lo, double hi, double step, double near, double far) {

    /**
     * An axis over at least {@code [min, max]} (both widened to a tick), with about {@code ticks} steps.
     *
     * @throws IllegalArgumentException when either bound is not a finite number
     */
    static Scale covering(double min, double max, int ticks, double near, double far) {
        if (!Double.isFinite(min) || !Double.isFinite(max)) {
            throw new IllegalArgumentException("axis over " + min + " .. " + max);
        }
        if (max - min <= 0) {
            max = min + (min == 0 ? 1 : StrictMath.abs(min));
        }
        double raw = (max - min) / ticks;
        double power = StrictMath.pow(10, StrictMath.floor(StrictMath.log10(raw)));
        double step = power * 10;
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (power * m >= raw) {
                step = power * m;
                break;
            }
        }
        // The tolerance keeps a bound that is a tick up to rounding (2.9999999 steps) on that tick.
        double lo = StrictMath.floor(min / step + 1e-9) * step + 0.0; // + 0.0: no -0.0
        double hi = StrictMath.ceil(max / step - 1e-9) * step + 0.0;
        return new Scale(lo, hi, step, near, far);
    }

    /** The pixel of {@code v}. */
    double at(double v) {
        return near + (v - lo) / (hi - lo) * (far - near);
    }

    /** The tick values from {@code lo} to {@code hi}. */
    List<Double> ticks() {
        List<Double> out = new ArrayList<>();
        long first = StrictMath.round(lo / step);
        long last = StrictMath.round(hi / step);
        for (long k = first; k <= last; k++) {
            out.add(k * step);
        }
        return out;
    }

    /** A tick's label: as many decimals as the step needs. */
    String label(double v) {
        int decimals = 0;
        while (decimals < 4 && StrictMath.abs(step * StrictMath.pow(10, decimals)
                - StrictMath.rint(step * StrictMath.pow(10, decimals))) > 1e-6) {
            decimals++;
        }
        String s = String.format(Locale.ROOT, "%." + decimals + "f", v);
        return s.matches("-0(\\.0+)?") ? s.substring(1) : s;
    }
}
