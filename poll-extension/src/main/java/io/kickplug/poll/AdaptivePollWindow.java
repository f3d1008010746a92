package io.kickplug.poll;

import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollWindow;

/**
 * QEMU's adaptive poll window (util/aio-posix.c, adjust_polling_time), for one polled source. After each
 * wait that ended with the source ready, {@code blockNs} (polling included) decides:
 * <ul>
 * <li>{@code blockNs <= window}: polling caught it, the sweet spot; no change;</li>
 * <li>{@code blockNs > maxNs}: no window we may use would have caught it; shrink (divide by
 *     {@code shrink}, or reset to 0 when shrink is 0, QEMU's default);</li>
 * <li>otherwise, when {@code window < maxNs} and {@code blockNs < maxNs}: a longer poll would have caught
 *     it; grow (0 becomes {@value #START_NS} ns, else multiply by {@code grow}, 2 when 0), capped at
 *     {@code maxNs}.</li>
 * </ul>
 * {@code blockNs == maxNs} with a smaller window changes nothing, as in QEMU. Not thread-safe: the I/O
 * thread alone uses it.
 */
public final class AdaptivePollWindow implements PollWindow {

    /** QEMU starts polling at 4 microseconds. */
    public static final long START_NS = 4000;
    private static final long DEFAULT_GROW = 2;

    private final long maxNs;
    private final long grow;
    private final long shrink;
    private long ns;

    public AdaptivePollWindow(PollParams params) {
        this.maxNs = params.maxNs();
        this.grow = params.grow() == 0 ? DEFAULT_GROW : params.grow();
        this.shrink = params.shrink();
    }

    @Override
    public long pollNs() {
        return ns;
    }

    @Override
    public void update(long blockNs) {
        if (blockNs <= ns) {
            return; // the sweet spot
        }
        if (blockNs > maxNs) {
            ns = shrink == 0 ? 0 : ns / shrink;
        } else if (ns < maxNs && blockNs < maxNs) {
            // No overflow: ns < maxNs <= 1 s and grow <= 1024.
            ns = ns == 0 ? START_NS : ns * grow;
            if (ns > maxNs) {
                ns = maxNs;
            }
        }
    }

    @Override
    public String toString() {
        return "AdaptivePollWindow(" + ns + " of " + maxNs + " ns)";
    }
}
