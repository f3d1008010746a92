package io.kickplug.poll;

import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollWindow;

/**
 * QEMU's adaptive poll window (util/aio-posix.c, adjust_polling_time), for one polled source, with one addition:
 * a probe out of the zero window. After each wait that ended with the source ready, {@code blockNs} (polling
 * included) decides:
 * <ul>
 * <li>{@code blockNs <= window}: polling caught it, the sweet spot; no change;</li>
 * <li>{@code blockNs > maxNs}: no window we may use would have caught it; shrink (divide by
 *     {@code shrink}, or reset to 0 when shrink is 0, QEMU's default);</li>
 * <li>otherwise, when {@code window < maxNs} and {@code blockNs < maxNs}: a longer poll would have caught
 *     it; grow (0 becomes {@value #START_NS} ns, else multiply by {@code grow}, 2 when 0), capped at
 *     {@code maxNs}.</li>
 * </ul>
 * {@code blockNs == maxNs} with a smaller window changes nothing, as in QEMU.
 *
 * <p>The probe. QEMU's rule can trap a window at 0 or 4 us for good: a thread that does not catch the work by
 * polling sleeps, and a wait that includes a sleep is longer than the wait for the work itself by what the sleep
 * causes: a driver that batches its notifications kicks only at the end of its batch (it sees the device's request
 * for a notification only then), and the thread's own wake-up follows the kick. At queue depth 32 against a
 * front-end that kicks once per batch, those waits were 35-50 us on this project's machines, over the 32.8 us of
 * poll-max-ns, so the window went back to 0 after every miss, although the driver's next request came 5-20 us after
 * the device ran out of work: the two sides slept in turn, a kick, a wake-up and an interrupt per round of the queue
 * (VhostBench's slow mode). So after {@value #PROBE_AFTER} waits in a row that the window did not catch, each within
 * {@value #BUSY_FACTOR} times {@code maxNs} (a longer wait is an idle source's, which resets the count), the next
 * wait polls for {@code maxNs} once. If that catches the work, the window becomes the first step of the grow
 * sequence ({@value #START_NS}, times {@code grow}, ...) that covers it; if not, the window is what it was and the
 * count starts again. A probe costs at most one {@code maxNs} of polling per {@value #PROBE_AFTER} such waits. Not
 * thread-safe: the I/O thread alone uses it.
 */
public final class AdaptivePollWindow implements PollWindow {

    /** QEMU starts polling at 4 microseconds. */
    public static final long START_NS = 4000;
    /** Waits in a row that the window did not catch (a busy source's), after which the next wait is a probe. */
    public static final int PROBE_AFTER = 8;
    /** A wait longer than this many times {@code maxNs} is an idle source: it resets the count of waits. */
    public static final int BUSY_FACTOR = 32;
    private static final long DEFAULT_GROW = 2;

    private final long maxNs;
    private final long grow;
    private final long shrink;
    private long ns;
    /** Waits in a row that polling did not catch, each within BUSY_FACTOR * maxNs. */
    private int uncaught;
    /** The next wait polls for maxNs: a probe out of the zero window. */
    private boolean probe;
    private long probes;
    private long probeHits;

    public AdaptivePollWindow(PollParams params) {
        this.maxNs = params.maxNs();
        this.grow = params.grow() == 0 ? DEFAULT_GROW : params.grow();
        this.shrink = params.shrink();
    }

    @Override
    public long pollNs() {
        return probe ? maxNs : ns;
    }

    @Override
    public void update(long blockNs) {
        if (probe) {
            probe = false;
            uncaught = 0;
            probes++;
            if (blockNs < maxNs) {
                // The probe caught it: the first window of the grow sequence that would have caught it too.
                probeHits++;
                long w = START_NS;
                while (w < blockNs && w < maxNs) {
                    w *= grow;
                }
                ns = Math.min(w, maxNs);
            } else if (blockNs > maxNs) {
                ns = shrink == 0 ? 0 : ns / shrink; // QEMU's rule for any wait past maxNs
            }
            return;
        }
        if (blockNs <= ns) {
            uncaught = 0;
            return; // the sweet spot
        }
        // Polling did not catch this wait (or the window was 0): one more in a row, unless the source was idle.
        uncaught = blockNs / BUSY_FACTOR <= maxNs ? uncaught + 1 : 0;
        if (blockNs > maxNs) {
            ns = shrink == 0 ? 0 : ns / shrink;
        } else if (ns < maxNs && blockNs < maxNs) {
            // No overflow: ns < maxNs <= 1 s and grow <= 1024.
            ns = ns == 0 ? START_NS : ns * grow;
            if (ns > maxNs) {
                ns = maxNs;
            }
        }
        if (uncaught >= PROBE_AFTER && ns < maxNs && maxNs > 0) {
            probe = true;
        }
    }

    /** Probes made so far (waits that polled for maxNs because the window had not caught the work). */
    public long probes() {
        return probes;
    }

    /** Probes that caught the work. */
    public long probeHits() {
        return probeHits;
    }

    @Override
    public String toString() {
        return "AdaptivePollWindow(" + ns + " of " + maxNs + " ns" + (probe ? ", probe next" : "") + ")";
    }
}
