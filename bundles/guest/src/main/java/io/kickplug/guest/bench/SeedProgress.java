package io.kickplug.guest.bench;

import java.util.Locale;

/** A progress line per point on stderr: seed, point, elapsed, remaining (estimated from the points so far). */
final class SeedProgress {
    private final int total;
    private final long start = System.nanoTime();
    private int done;

    SeedProgress(int total) {
        this.total = total;
    }

    void begin(String seed, String label) {
        long elapsed = System.nanoTime() - start;
        String remaining = done == 0 ? "?" : Math.round(elapsed / 1e9 / done * Math.max(0, total - done)) + "s";
        System.err.printf(Locale.ROOT, "kp:bench seeds: seed %s point %d/%d (%s), elapsed %ds, remaining ~%s%n",
                seed, done + 1, total, label, Math.round(elapsed / 1e9), remaining);
    }

    void end() {
        done++;
    }
}
