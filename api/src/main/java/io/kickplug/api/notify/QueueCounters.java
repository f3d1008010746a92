package io.kickplug.api.notify;

import io.kickplug.api.poll.PollCounters;
import java.util.List;

/**
 * A snapshot of one virtqueue's counters, kept across device resets.
 *
 * @param disk the disk name
 * @param queue the virtqueue index
 * @param strategy the completion-notification strategy in use now
 * @param configured the strategy configured for the queue (differs from {@code strategy} while its service
 *     is not bound: the queue then uses {@value CompletionNotifier#IMMEDIATE})
 * @param requests requests the queue took from its available ring
 * @param bytes data bytes of the requests completed successfully (read plus written)
 * @param availNotifications available-buffer notifications received (QueueNotify writes, section 2.7.10)
 * @param availSuppressed chains consumed without a notification of their own: per run of the queue's
 *     handler, the chains it took minus the notifications received since the previous run, when positive.
 *     These are chains the driver added while the device had notifications disabled (NO_NOTIFY or
 *     avail_event, section 2.7.10) or batched under one notification.
 * @param interruptsSent used-buffer notifications sent
 * @param interruptsSuppressed decisions that sent no notification because the driver did not want one
 *     (NO_INTERRUPT or used_event, section 2.7.7.2), or whose wanted notification was already owed and
 *     goes out with it (a strategy that defers sends, defer-call): sent plus suppressed is the decisions
 * @param batches completion batches (a strategy's begin/end bracket with at least one used buffer)
 * @param batchHistogram batches by used buffers per batch, buckets {@link #BATCH_BUCKETS}
 * @param inFlight requests taken and not yet completed, now
 * @param switches strategy switches applied on the queue
 * @param pollHits polls that found work (filled by the polling extension; 0 without it)
 * @param pollMisses polls that found no work before their time ran out
 * @param pollNanos time spent polling
 */
public record QueueCounters(String disk, int queue, String strategy, String configured, long requests, long bytes,
        long availNotifications, long availSuppressed, long interruptsSent, long interruptsSuppressed,
        long batches, List<Long> batchHistogram, long inFlight, long switches, long pollHits, long pollMisses,
        long pollNanos) {

    /** Labels of the batch-size buckets: 1, 2-3, 4-7, ... (powers of two), the last open. */
    public static final List<String> BATCH_BUCKETS = List.of("1", "2-3", "4-7", "8-15", "16-31", "32-63",
            "64-127", "128-255", "256+");

    public QueueCounters {
        batchHistogram = batchHistogram == null ? List.of() : List.copyOf(batchHistogram);
    }

    /** The bucket of a batch of {@code size} used buffers (size at least 1). */
    public static int bucketOf(int size) {
        int b = 31 - Integer.numberOfLeadingZeros(Math.max(1, size));
        return Math.min(b, BATCH_BUCKETS.size() - 1);
    }

    /** These counters with the polling columns from {@code poll}. */
    public QueueCounters withPoll(PollCounters poll) {
        return new QueueCounters(disk, queue, strategy, configured, requests, bytes, availNotifications,
                availSuppressed, interruptsSent, interruptsSuppressed, batches, batchHistogram, inFlight, switches,
                poll.hits(), poll.misses(), poll.pollNanos());
    }
}
