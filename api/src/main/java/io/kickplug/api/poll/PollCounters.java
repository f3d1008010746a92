package io.kickplug.api.poll;

/**
 * What polling found for one source.
 *
 * @param hits polls that found work (the handler ran without a notification)
 * @param misses poll windows that expired without work for this source
 * @param pollNanos time the I/O thread spent polling while this source was polled
 */
public record PollCounters(long hits, long misses, long pollNanos) {

    public static final PollCounters ZERO = new PollCounters(0, 0, 0);

    public PollCounters plus(PollCounters o) {
        return new PollCounters(hits + o.hits, misses + o.misses, pollNanos + o.pollNanos);
    }
}
