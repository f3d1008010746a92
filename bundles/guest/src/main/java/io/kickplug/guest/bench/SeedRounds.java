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
record SeedRounds(SeedPoint median, double minIops, double maxIops, int count, List<Double> iops) {

    SeedRounds {
        iops = List.copyOf(iops);
    }

    static SeedRounds of(List<SeedPoint> rounds) {
        if (rounds.isEmpty()) {
            throw new IllegalArgumentException("no rounds");
        }
        List<SeedPoint> sorted = new ArrayList<>(rounds);
        sorted.sort(Comparator.comparingDouble(SeedPoint::iops));
        return new SeedRounds(sorted.get((sorted.size() - 1) / 2), sorted.get(0).iops(),
                sorted.get(sorted.size() - 1).iops(), sorted.size(), rounds.stream().map(SeedPoint::iops).toList());
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
     * Runs every configuration of {@code keys} {@code rounds} times, interleaved (A B C A B C ...), so that a slow
     * spell of the host or a recompilation lands on every configuration alike instead of on the one that happened
     * to run then. Measured charging reads each thread's CPU clock, and one run of a configuration was seen at 843k
     * IOPS and the next at 519k with the same interrupts per request; {@code VhostBench} reports medians too.
     *
     * @param round runs one round of a configuration; its second argument tags the progress line (" round 2/3")
     */
    static <K> Map<K, SeedRounds> interleave(int rounds, List<K> keys, BiFunction<K, String, SeedPoint> round) {
        Map<K, List<SeedPoint>> all = new LinkedHashMap<>();
        for (int r = 1; r <= rounds; r++) {
            String tag = rounds == 1 ? "" : " round " + r + "/" + rounds;
            for (K k : keys) {
                all.computeIfAbsent(k, x -> new ArrayList<>()).add(round.apply(k, tag));
            }
        }
        Map<K, SeedRounds> out = new LinkedHashMap<>();
        all.forEach((k, list) -> out.put(k, of(list)));
        return out;
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
    }
}
