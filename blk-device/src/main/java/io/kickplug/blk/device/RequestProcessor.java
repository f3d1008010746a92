package io.kickplug.blk.device;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.blk.request.BlkRequest;
import io.kickplug.blk.request.BlkRequestParser;
import io.kickplug.blk.request.Outcome;

/**
 * Serves virtio-blk requests against a backend: parse, {@link RequestExecutor#execute}, {@link #finish}.
 * {@link #finish} is the one place that turns an outcome into the status byte, the counters and the used
 * length.
 *
 * <p>The device's queues use {@link #accept}, run the executor inline or on a worker, and call {@link #finish}
 * back on the queue's I/O thread ({@link QueueWorker}).
 */
final class RequestProcessor {

    private final BlockBackend backend;
    private final boolean readOnly;
    private final RequestExecutor executor;
    private final BlkStats stats;
    private final BlkMode mode;

    /**
     * @param serial the GET_ID answer, at most 20 bytes; padded with zeroes to 20 (section 5.2.6)
     * @param mode the negotiated features, limits and write cache of the device
     */
    RequestProcessor(String diskName, BlockBackend backend, boolean readOnly, byte[] serial, BlkStats stats,
            BlkMode mode) {
        this.backend = backend;
        this.readOnly = readOnly;
        this.executor = new RequestExecutor(diskName, backend, serial, mode);
        this.stats = stats;
        this.mode = mode;
    }

    /** Capacity in 512-byte sectors, as the configuration space reports it. */
    long capacitySectors() {
        return backend.size() / VirtioBlk.SECTOR_SIZE;
    }

    /**
     * Counts a chain as in flight and parses it into {@code target}, a request of the queue's pool; the caller
     * must later {@link #finish} the request.
     *
     * @throws GuestFaultException when the chain cannot carry a request (it is then not in flight)
     */
    BlkRequest accept(DescriptorChain chain, BlkRequest target) {
        stats.begin();
        try {
            return BlkRequestParser.parseInto(target, chain, capacitySectors(), readOnly, mode.features(),
                    mode.limits());
        } catch (RuntimeException e) {
            stats.abandon();
            throw e;
        }
    }

    /**
     * As {@link #accept(DescriptorChain, BlkRequest)}, counted in the queue's {@code batch} (in flight once the
     * batch is {@link #publish}ed): no atomic per request.
     */
    BlkRequest accept(DescriptorChain chain, BlkRequest target, BlkStats.Batch batch) {
        batch.begin();
        try {
            return BlkRequestParser.parseInto(target, chain, capacitySectors(), readOnly, mode.features(),
                    mode.limits());
        } catch (RuntimeException e) {
            batch.abandon();
            throw e;
        }
    }

    /** The synchronous backend work, callable from any thread. */
    RequestExecutor executor() {
        return executor;
    }

    /**
     * Ends {@code request}: writes its status byte, counts it, and returns the used length (data bytes
     * written into the chain, plus the status byte; section 2.7.8.2 forbids overstating it). The request stays
     * in flight until the caller pushed it to the used ring and called {@link #released()}.
     */
    int finish(BlkRequest request, Outcome outcome, long dataWritten) {
        request.status().writeU8(outcome.status());
        stats.complete(request.kind(), outcome, outcome == Outcome.OK ? request.dataBytes() : 0);
        return (int) (dataWritten + 1);
    }

    /** As {@link #finish(BlkRequest, Outcome, long)}, counted in the queue's {@code batch}. */
    int finish(BlkRequest request, Outcome outcome, long dataWritten, BlkStats.Batch batch) {
        request.status().writeU8(outcome.status());
        batch.complete(request.kind(), outcome, outcome == Outcome.OK ? request.dataBytes() : 0);
        return (int) (dataWritten + 1);
    }

    /** The counting batch of queue {@code queue} ({@link BlkStats#batch}). */
    BlkStats.Batch batch(int queue) {
        return stats.batch(queue);
    }

    /** Publishes a queue's batch of counts ({@link BlkStats#publish}). */
    void publish(BlkStats.Batch batch) {
        stats.publish(batch);
    }

    /** Counts a queue's batch in and {@code released} of its requests out of flight ({@link BlkStats#settle}). */
    void settle(BlkStats.Batch batch, int released) {
        stats.settle(batch, released);
    }

    /** A request {@link #finish}ed earlier is now in the used ring: it no longer holds up a reset. */
    void released() {
        stats.released();
    }

    /** {@code n} requests {@link #finish}ed earlier are now published in the used ring. */
    void released(int n) {
        stats.released(n);
    }
}
