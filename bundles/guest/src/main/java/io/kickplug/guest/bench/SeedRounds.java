package io.kickplug.guest.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * A configuration's interleaved rounds: the round with the median IOPS stands for it, the lowest and highest IOPS
 * beside it.
 *
 * @param median the round with the median IOPS (of an even count, the lower of the middle two)
 * @param count how many rounds ran
 * @param iops each round's IOPS, in the order the rounds ran
 */
record SeedRounds(SeedPoint median, double minIops, double maxIops, int count, List<Double> iops,
        List<SeedPoint> rounds) {

    SeedRounds {
        iops = List.copyOf(iops);
        rounds = List.copyOf(rounds);
    }

    static SeedRounds of(List<SeedPoint> rounds) {
        if (rounds.isEmpty()) {
            throw new IllegalArgumentException("no rounds");
        }
        List<SeedPoint> sorted = new ArrayList<>(rounds);
        sorted.sort(Comparator.comparingDouble(SeedPoint::iops));
        return new SeedRounds(sorted.get((sorted.size() - 1) / 2), sorted.get(0).iops(),
                sorted.get(sorted.size() - 1).iops(), sorted.size(), rounds.stream().map(SeedPoint::iops).toList(),
                rounds);
    }

    /**
     * An effect within each round: {@code effect} of configuration {@code a}'s and {@code b}'s IOPS of the same round
     * (they ran one after the other, so a slow spell of the host touches both); empty for a single round.
     */
    static List<Double> perRound(SeedRounds a, SeedRounds b, java.util.function.DoubleBinaryOperator effect) {
        List<Double> out = new ArrayList<>();
        if (a.count() < 2 || b.count() < 2) {
            return out;
        }
        for (int r = 0; r < Math.min(a.count(), b.count()); r++) {
            out.add(effect.applyAsDouble(a.iops().get(r), b.iops().get(r)));
        }
        return out;
    }

    /**
     * One round of a configuration.
     *
     * @param number 1 to {@code of}
     * @param of how many rounds run
     */
    record Round(int number, int of) {

        /** The progress line's tag: " round 2/3", "" for a single round. */
        String tag() {
            return of == 1 ? "" : " round " + number + "/" + of;
        }
    }

    /**
     * Runs every configuration of {@code keys} {@code rounds} times, interleaved, so that a slow spell of the host or a
     * recompilation lands on every configuration alike instead of on the one that happened to run then. Measured
     * charging reads each thread's CPU clock, and one run of a configuration was seen at 843k IOPS and the next at
     * 519k with the same interrupts per request; {@code VhostBench} reports medians too. Every second round runs the
     * configurations in the reverse order (A B C, C B A, A B C ...), so that no configuration always runs first
     * after another seed's or configuration's run: what a position costs (the JIT recompiling for the code that ran
     * before, the garbage it left) falls on each alike. The caller makes the rounds independent otherwise (virtual
     * time's tie-break seed changes with {@link Round#number}: {@link SeedsBench}).
     *
     * @param round runs one round of a configuration
     */
    static <K> Map<K, SeedRounds> interleave(int rounds, List<K> keys, BiFunction<K, Round, SeedPoint> round) {
        Map<K, List<SeedPoint>> all = new LinkedHashMap<>();
        keys.forEach(k -> all.put(k, new ArrayList<>()));
        for (int r = 1; r <= rounds; r++) {
            for (K k : order(keys, r)) {
                all.get(k).add(round.apply(k, new Round(r, rounds)));
            }
        }
        Map<K, SeedRounds> out = new LinkedHashMap<>();
        all.forEach((k, list) -> out.put(k, of(list)));
        return out;
    }

    /** The configurations in round {@code r}'s order (1-based): as given in odd rounds, reversed in even ones. */
    static <K> List<K> order(List<K> keys, int r) {
        if (r % 2 == 1) {
            return keys;
        }
        List<K> reversed = new ArrayList<>(keys);
        java.util.Collections.reverse(reversed);
        return reversed;
    }

    /** A point's first figures: the median round's IOPS, then the spread ({@link #addTo}). */
    Map<String, Double> figures() {
        Map<String, Double> figures = new LinkedHashMap<>();
        figures.put("IOPS", median.iops());
        addTo(figures);
        return figures;
    }

    /** The spread as figures beside the median's, when there was more than one round. */
    void addTo(Map<String, Double> figures) {
        if (count > 1) {
            figures.put("IOPS-rounds-min", minIops);
            figures.put("IOPS-rounds-max", maxIops);
        }
        if (median.guestCpuNanos() > 0) {
            // Measured charging: what the median round's code took per request, on the guest and device side.
            figures.put("guest-cpu-ns/req", median.guestNanosPerRequest());
            figures.put("device-cpu-ns/req", median.deviceNanosPerRequest());
        }
        long slices = rounds.stream().mapToLong(SeedPoint::longSlices).sum();
        if (slices > 0) {
            // Virtual time charged on a shared CPU: what the host's scheduler (or a JVM pause) took, over all rounds.
            figures.put("long-slices", (double) slices);
            figures.put("long-slice-ms", rounds.stream().mapToLong(SeedPoint::longSliceNanos).sum() / 1e6);
        }
    }
}
