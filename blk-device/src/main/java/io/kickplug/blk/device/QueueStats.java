package io.kickplug.blk.device;

import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.poll.PollCounters;
import io.kickplug.api.notify.QueueCounters;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * What one virtqueue of a disk keeps across device resets: its configured completion-notification strategy,
 * the one in use, and its counters ({@link QueueCounters} documents each). Counters are written on the
 * queue's I/O thread, except the notification count (vCPU threads); read from anywhere. The per-request
 * counters (requests, bytes, in flight) are plain fields of the I/O thread, published once per batch
 * ({@link #publish}), so a request costs no atomic read-modify-write for them.
 */
final class QueueStats {

    private final String disk;
    private final int index;
    private static final VarHandle PUBLISHED_REQUESTS;
    private static final VarHandle PUBLISHED_BYTES;
    private static final VarHandle PUBLISHED_IN_FLIGHT;
    private static final VarHandle INTERRUPTS_SENT;
    private static final VarHandle INTERRUPTS_SUPPRESSED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            PUBLISHED_REQUESTS = lookup.findVarHandle(QueueStats.class, "publishedRequests", long.class);
            PUBLISHED_BYTES = lookup.findVarHandle(QueueStats.class, "publishedBytes", long.class);
            PUBLISHED_IN_FLIGHT = lookup.findVarHandle(QueueStats.class, "publishedInFlight", long.class);
            INTERRUPTS_SENT = lookup.findVarHandle(QueueStats.class, "interruptsSent", long.class);
            INTERRUPTS_SUPPRESSED = lookup.findVarHandle(QueueStats.class, "interruptsSuppressed", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Requests taken, data bytes of successful IN/OUT, requests in flight: the I/O thread's own, plain. */
    long requests;
    long bytes;
    long inFlight;
    /** What {@link #publish} last published; read by {@link #snapshot} on any thread. */
    @SuppressWarnings("unused")
    private long publishedRequests;
    @SuppressWarnings("unused")
    private long publishedBytes;
    @SuppressWarnings("unused")
    private long publishedInFlight;
    final LongAdder availNotifications = new LongAdder();
    final LongAdder availSuppressed = new LongAdder();
    /**
     * Notification decisions, one of the two per decision: written by the queue's I/O thread only (a plain read of
     * its own last value and a release store, no atomic read-modify-write per request), read with acquire loads.
     */
    @SuppressWarnings("unused")
    private long interruptsSent;
    @SuppressWarnings("unused")
    private long interruptsSuppressed;
    /** Batches by size bucket; the batch count is their sum, so a snapshot never shows one without the other. */
    final AtomicLongArray histogram = new AtomicLongArray(QueueCounters.BATCH_BUCKETS.size());
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

    /**
     * Publishes the I/O thread's counters; I/O thread only, once per batch and per handler run. Release
     * stores: atomic for a {@code long} (a plain one need not be, JLS 17.7) and ordered after the batch's
     * ring work, so a reader's acquire load (in {@link #snapshot}) sees counts no newer than the ring.
     */
    void publish() {
        PUBLISHED_REQUESTS.setRelease(this, requests);
        PUBLISHED_BYTES.setRelease(this, bytes);
        PUBLISHED_IN_FLIGHT.setRelease(this, inFlight);
    }

    /** A notification decision sent one; I/O thread only. */
    void interruptSent() {
        INTERRUPTS_SENT.setRelease(this, interruptsSent + 1);
    }

    /** A notification decision sent none (or was covered by one owed); I/O thread only. */
    void interruptSuppressed() {
        INTERRUPTS_SUPPRESSED.setRelease(this, interruptsSuppressed + 1);
    }

    /** A batch of {@code size} used buffers ended. */
    void batch(int size) {
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
        publish();
    }

    QueueCounters snapshot() {
        List<Long> h = new ArrayList<>(histogram.length());
        long batches = 0;
        for (int i = 0; i < histogram.length(); i++) {
            long n = histogram.get(i);
            h.add(n);
            batches += n;
        }
        PollCounters p = poll.get();
        // Acquire: pairs with publish()'s release stores.
        long requestsNow = (long) PUBLISHED_REQUESTS.getAcquire(this);
        long bytesNow = (long) PUBLISHED_BYTES.getAcquire(this);
        long inFlightNow = (long) PUBLISHED_IN_FLIGHT.getAcquire(this);
        return new QueueCounters(disk, index, inUse, configured, requestsNow, bytesNow,
                availNotifications.sum(), availSuppressed.sum(), (long) INTERRUPTS_SENT.getAcquire(this),
                (long) INTERRUPTS_SUPPRESSED.getAcquire(this),
                batches, h, inFlightNow, switches.sum(), p.hits(), p.misses(), p.pollNanos());
    }
}
