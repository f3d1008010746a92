package io.kickplug.blk.device;

import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.poll.PollCounters;
import io.kickplug.api.notify.QueueCounters;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * What one virtqueue of a disk keeps across device resets: its configured completion-notification strategy,
 * the one in use, and its counters ({@link QueueCounters} documents each). Counters are written on the
 * queue's I/O thread, except the notification count (vCPU threads); read from anywhere.
 */
final class QueueStats {

    private final String disk;
    private final int index;
    final LongAdder requests = new LongAdder();
    final LongAdder bytes = new LongAdder();
    final LongAdder availNotifications = new LongAdder();
    final LongAdder availSuppressed = new LongAdder();
    final LongAdder interruptsSent = new LongAdder();
    final LongAdder interruptsSuppressed = new LongAdder();
    final LongAdder batches = new LongAdder();
    final AtomicLongArray histogram = new AtomicLongArray(QueueCounters.BATCH_BUCKETS.size());
    final LongAdder inFlight = new LongAdder();
    final LongAdder switches = new LongAdder();
    /** Notifications seen by the previous handler run; I/O thread only. */
    long notificationsSeen;
    /** The strategy the queue should use; written by any thread. */
    volatile String configured = CompletionNotifier.IMMEDIATE;
    /** The strategy the queue uses now; written on the I/O thread. */
    volatile String inUse = CompletionNotifier.IMMEDIATE;
    volatile Supplier<PollCounters> poll = () -> PollCounters.NONE;

    QueueStats(String disk, int index) {
        this.disk = disk;
        this.index = index;
    }

    int index() {
        return index;
    }

    /** A batch of {@code size} used buffers ended. */
    void batch(int size) {
        batches.increment();
        histogram.incrementAndGet(QueueCounters.bucketOf(size));
    }

    /**
     * A handler run took {@code chains}: those beyond the notifications received since the previous run
     * count as suppressed. I/O thread only.
     */
    void handlerRan(int chains) {
        long seen = availNotifications.sum();
        long kicks = seen - notificationsSeen;
        notificationsSeen = seen;
        if (chains > kicks) {
            availSuppressed.add(chains - kicks);
        }
    }

    QueueCounters snapshot() {
        List<Long> h = new ArrayList<>(histogram.length());
        for (int i = 0; i < histogram.length(); i++) {
            h.add(histogram.get(i));
        }
        PollCounters p = poll.get();
        return new QueueCounters(disk, index, inUse, configured, requests.sum(), bytes.sum(),
                availNotifications.sum(), availSuppressed.sum(), interruptsSent.sum(), interruptsSuppressed.sum(),
                batches.sum(), h, inFlight.sum(), switches.sum(), p.hits(), p.misses(), p.pollNanos());
    }
}
