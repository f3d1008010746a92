package io.kickplug.examples.coalesce;

import java.util.concurrent.TimeUnit;

/**
 * SPDK vhost's interrupt coalescing for one virtqueue (lib/vhost/vhost.c: {@code session_vq_io_stats_update},
 * {@code check_session_vq_io_stats}, {@code vhost_session_vq_used_signal}), as plain state the strategy drives on
 * the queue's I/O thread. Every {@value #STATS_INTERVAL_MS} ms the completions of the last interval are compared
 * with the threshold ({@code iops_threshold} times the interval): above it, interrupts are delayed by
 * {@code delay_base_us * (count - threshold) / threshold}, so the delay grows with the rate; at or below it they go
 * out at once. While delayed, a notification goes out only when the previous one is that delay old; the buffers
 * completed in between wait for it (a timer sends it if nothing else comes).
 *
 * <p>Two differences from SPDK: at or below the threshold the delay drops to 0 at once (SPDK keeps the last
 * delay and lets the count grow until it crosses the threshold again), and the delay is capped at
 * {@code max_delay_us}.
 */
final class CoalescingState {

    /** SPDK_VHOST_STATS_CHECK_INTERVAL_MS. */
    static final long STATS_INTERVAL_MS = 10;
    static final long STATS_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(STATS_INTERVAL_MS);
    /** {@link #decide}'s answer: notify now. */
    static final long NOW = Long.MIN_VALUE;

    private boolean started;
    private long nextStatsCheck;
    private long completions;
    private long irqDelayNs;
    private long nextEvent;
    /** A timer is armed to call {@link #decide} again (the strategy's bookkeeping). */
    boolean timerArmed;

    /** One used buffer pushed (SPDK's used_req_cnt, added to req_cnt). */
    void completed() {
        completions++;
    }

    /** The delay in force now, in ns (0: not coalescing). */
    long irqDelayNs() {
        return irqDelayNs;
    }

    /**
     * Whether the used buffers pushed so far get their notification decided now ({@link #NOW}) or wait until the
     * returned time ({@link System#nanoTime()} scale).
     */
    long decide(long now, CoalesceSettings settings) {
        if (!started || now - nextStatsCheck >= 0) {
            started = true;
            nextStatsCheck = now + STATS_INTERVAL_NS;
            update(now, settings);
        }
        if (irqDelayNs == 0 || now - nextEvent >= 0) {
            nextEvent = now + irqDelayNs;
            return NOW;
        }
        return nextEvent;
    }

    private void update(long now, CoalesceSettings settings) {
        long threshold = settings.iopsThreshold() * STATS_INTERVAL_MS / 1000;
        long count = completions;
        completions = 0;
        if (settings.delayBaseUs() == 0 || count <= threshold) {
            irqDelayNs = 0;
            return;
        }
        long delay = TimeUnit.MICROSECONDS.toNanos(settings.delayBaseUs()) * (count - threshold) / threshold;
        irqDelayNs = Math.min(delay, TimeUnit.MICROSECONDS.toNanos(settings.maxDelayUs()));
        nextEvent = now;
    }
}
