package io.kickplug.api.poll;

/**
 * The polling columns of a queue's {@link io.kickplug.api.notify.QueueCounters}, as a polling extension reports them.
 *
 * @param hits polls that found new available buffers
 * @param misses polls that ended without finding any
 * @param pollNanos time spent polling
 */
public record PollCounters(long hits, long misses, long pollNanos) {

    public static final PollCounters NONE = new PollCounters(0, 0, 0);
}
