package io.kickplug.api.poll;

/**
 * QEMU's IOThread polling parameters.
 *
 * @param maxNs the longest poll window in ns ({@code poll-max-ns}); 0 turns polling off
 * @param grow factor by which a window grows after a wait a longer poll would have caught
 *     ({@code poll-grow}); 0 means the default, 2
 * @param shrink divisor applied to a window after a wait longer than {@code maxNs} ({@code poll-shrink}); 0
 *     means reset the window to 0
 */
public record PollParams(long maxNs, long grow, long shrink) {

    /** QEMU's default poll-max-ns. */
    public static final long DEFAULT_MAX_NS = 32768;
    /** Largest accepted poll-max-ns: 1 s. */
    public static final long LIMIT_MAX_NS = 1_000_000_000L;

    public PollParams {
        if (maxNs < 0 || maxNs > LIMIT_MAX_NS) {
            throw new IllegalArgumentException("poll-max-ns " + maxNs + " is out of range 0.." + LIMIT_MAX_NS);
        }
        if (grow < 0 || grow == 1 || grow > 1024) {
            throw new IllegalArgumentException("poll-grow " + grow + " must be 0 (default 2) or 2..1024");
        }
        if (shrink < 0 || shrink == 1 || shrink > 1024) {
            throw new IllegalArgumentException("poll-shrink " + shrink + " must be 0 (reset) or 2..1024");
        }
    }

    /** QEMU's defaults: 32768 ns, grow x2, shrink to 0. */
    public static PollParams defaults() {
        return new PollParams(DEFAULT_MAX_NS, 0, 0);
    }

    public PollParams withMaxNs(long ns) {
        return new PollParams(ns, grow, shrink);
    }
}
