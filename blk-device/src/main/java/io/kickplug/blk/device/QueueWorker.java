package io.kickplug.blk.device;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.PollHandler;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DeviceSignals;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.blk.request.BlkRequest;
import io.kickplug.blk.request.DiscardSegment;
import io.kickplug.blk.request.Outcome;
import io.kickplug.blk.request.RequestType;
import io.kickplug.blk.tracked.TrackedRequests;
import io.kickplug.blk.tracked.TrackedRequests.Access;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;

/**
 * Serves one virtqueue on its I/O thread: the handler of the queue's {@link io.kickplug.api.iothread.IoSource}.
 *
 * <p>Pipeline of one request: the I/O thread pops and parses the chain and registers the request in the
 * disk's tracked list; once nothing it depends on is in flight, {@link RequestExecutor#execute} runs inline
 * (non-blocking backend) or on the disk's worker pool (blocking backend); the completion (status byte,
 * counters, used-ring push, then the queue's completion-notification strategy through its
 * {@link QueueChannel}) always runs on this queue's I/O thread, which alone touches the {@link DeviceQueue}.
 * Many requests may be in flight per queue.
 *
 * <p>After a fault it takes no new chain until the device is reset and activated again; requests already
 * in flight still complete.
 *
 * <p>Polling: as the queue's {@link PollHandler} the worker turns the driver's notifications off when its I/O
 * thread starts polling and on when it stops (VIRTIO 1.2 section 2.7.10); while they are off, the drain
 * leaves them off (QEMU's virtio_blk_handle_vq does not touch a queue's notification state it did not set).
 * The I/O thread polls once more after {@link #pollEnd()}, so a chain added while notifications were being
 * re-enabled is found without a notification.
 */
final class QueueWorker implements Runnable, PollHandler {

    private static final Logger LOG = System.getLogger(QueueWorker.class.getName());

    /** What the queues of one disk share. {@code pool} is {@code null} for a non-blocking backend. */
    record Shared(String diskName, RequestProcessor processor, RequestExecutor executor, TrackedRequests tracked,
            Executor pool) {
    }

    private final Shared disk;
    private final DeviceQueue queue;
    private final DeviceSignals signals;
    private final IoContext context;
    private final QueueChannel channel;
    private final QueueStats counters;
    private final PollTally pollTally;
    private final BooleanSupplier stopping;
    /** Per descriptor head: the slot of the request that head carries (made on the head's first use). */
    private final Slot[] slots;
    /** Set on the I/O thread, or by a worker after an internal error; read by tests and diagnostics. */
    private volatile boolean stopped;
    /** Whether the queue is in its I/O context's dirty list; I/O thread only. */
    boolean dirty;
    /** Requests pushed to the used ring whose used index is not published yet; I/O thread only. */
    private int unreleased;
    /** The disk counters of this queue's requests since the last publication; I/O thread only. */
    private final BlkStats.Batch batch;
    /** Notifications are off because the I/O thread polls the queue; I/O thread only. */
    private boolean polling;

    /**
     * @param stopping true once the device is being reset: the worker then takes no new chain
     */
    QueueWorker(Shared disk, DeviceQueue queue, DeviceSignals signals, IoContext context, QueueChannel channel,
            PollTally pollTally, BooleanSupplier stopping) {
        this.pollTally = pollTally;
        this.disk = disk;
        this.queue = queue;
        this.signals = signals;
        this.context = context;
        this.channel = channel;
        this.counters = channel.stats();
        this.stopping = stopping;
        this.slots = new Slot[queue.size()];
        this.batch = disk.processor().batch(queue.index());
        channel.publisher(this::publishUsed);
    }

    QueueChannel channel() {
        return channel;
    }

    /** Runs on the I/O thread; never throws. */
    @Override
    public void run() {
        if (stopped || stopping.getAsBoolean()) {
            return;
        }
        channel.applySwitchIfPending(); // a safe point: no batch of this queue is open between runs
        try {
            drain();
        } catch (GuestFaultException fault) {
            fault(fault);
        } catch (Throwable t) {
            internalError(t);
        } finally {
            context.notifyDirty();
        }
    }

    private void fault(GuestFaultException fault) {
        stopped = true;
        LOG.log(Level.WARNING, "disk " + disk.diskName() + " queue " + queue.index()
                + ": guest fault, queue stopped until reset: " + fault.getMessage());
        signals.deviceError(fault);
    }

    /** Whether the available ring holds chains not yet taken; a ring fault counts as work, for run() to latch. */
    @Override
    public boolean poll() {
        if (stopped || stopping.getAsBoolean()) {
            return false;
        }
        try {
            return queue.hasAvailable();
        } catch (GuestFaultException e) {
            return true;
        }
    }

    /** Section 2.7.10: ask the driver not to notify while the I/O thread polls the available ring. */
    @Override
    public void pollBegin() {
        polling = true;
        if (stopped) {
            return;
        }
        try {
            queue.disableNotification();
        } catch (GuestFaultException e) {
            fault(e);
        }
    }

    @Override
    public void polled(int hits, int misses, long nanos) {
        pollTally.add(hits, misses, nanos);
    }

    /**
     * Notifications on again; the queue's full fence and re-read of avail.idx happen here, and the I/O thread
     * polls once more after this, so an entry added meanwhile is not left waiting for a notification.
     */
    @Override
    public void pollEnd() {
        polling = false;
        if (stopped) {
            return;
        }
        try {
            queue.enableNotification();
        } catch (GuestFaultException e) {
            fault(e);
        }
    }

    private void internalError(Throwable t) {
        stopped = true;
        LOG.log(Level.ERROR, "disk " + disk.diskName() + " queue " + queue.index()
                + ": internal error, queue stopped until reset", t);
        // 2.1.2: DEVICE_NEEDS_RESET is how a device tells the driver it cannot go on.
        try {
            signals.deviceError(new GuestFaultException("2.1.2",
                    "device error while serving queue " + queue.index() + ": " + t, t));
        } catch (Throwable ignored) {
            // nothing more can be done on this thread
        }
    }

    /**
     * The loss-free drain loop of {@link DeviceQueue}, with one notification decision per batch. While the
     * I/O thread polls, notifications are off and stay off: take what is there; polling finds the rest.
     */
    private void drain() {
        int chains = 0;
        try {
            if (polling) {
                DescriptorChain chain;
                while (!stopping.getAsBoolean() && (chain = queue.pop()) != null) {
                    chains++;
                    accept(chain);
                }
                context.notifyDirty();
                return;
            }
            // Section 2.7.10: the thread may go to sleep only after enableNotification() (publish
            // avail_event or clear NO_NOTIFY, full fence, re-read avail.idx) found nothing; its fence pairs with
            // the driver's between publishing avail.idx and reading the suppression field.
            do {
                queue.disableNotification();
                DescriptorChain chain;
                while (!stopping.getAsBoolean() && (chain = queue.pop()) != null) {
                    chains++;
                    accept(chain);
                }
                // The batch ends: each dirty queue's strategy makes or schedules its decisions (2.7.7.2).
                context.notifyDirty();
            } while (!stopping.getAsBoolean() && queue.enableNotification());
        } finally {
            counters.handlerRan(chains);
            // Requests taken and not completed in this run (a worker pool's) are in flight from now on, before
            // any completion of theirs can be released.
            disk.processor().publish(batch);
        }
    }

    /**
     * Parses a chain into its head's slot, registers the request and starts it when nothing it depends on is
     * in flight. No allocation for a read or write in steady state.
     */
    private void accept(DescriptorChain chain) {
        int head = chain.head();
        Slot slot = slots[head];
        if (slot == null) {
            slot = new Slot();
            slots[head] = slot;
        } else if (slot.busy) {
            // The queue pops a head again only after it was pushed (section 2.7.13): a device bug otherwise.
            throw new IllegalStateException("queue " + queue.index() + ": head " + head
                    + " popped again while its request is in flight");
        }
        BlkRequest request = disk.processor().accept(chain, slot.request, batch);
        slot.busy = true;
        counters.requests++; // plain: this I/O thread owns them; published per batch (QueueStats.publish)
        counters.inFlight++;
        Access access = access(request);
        if (access == null) {
            // Refused, or answered without the backend (GET_ID): nothing to order it against.
            slot.outcome = execute(request);
            complete(slot);
            return;
        }
        disk.tracked().begin(slot.tracked, access, first(request), end(request), context.index());
        if (slot.tracked.arm()) {
            slot.start(true);
        }
    }

    /** How the tracked list orders a request, or {@code null} when it does not reach the backend. */
    static Access access(BlkRequest request) {
        if (request.rejected()) {
            return null;
        }
        return switch (request.kind()) {
            case IN -> Access.READ;
            case OUT -> Access.WRITE;
            case FLUSH -> Access.FLUSH;
            // QEMU makes write-zeroes and discard serialising: overlapping requests wait for each other.
            case DISCARD, WRITE_ZEROES, SECURE_ERASE -> Access.SERIALISING;
            default -> null; // GET_ID, GET_LIFETIME: no disk data
        };
    }

    /** The first sector a request touches; for segment requests, the lowest of all segments. */
    static long first(BlkRequest request) {
        if (request.segments().isEmpty()) {
            return request.sector();
        }
        long first = Long.MAX_VALUE;
        for (DiscardSegment s : request.segments()) {
            first = Math.min(first, s.sector());
        }
        return first;
    }

    /**
     * The sector after the last one a request touches; for segment requests, the end of the span that
     * covers all segments (a conservative range: it may order requests that fall between segments).
     */
    static long end(BlkRequest request) {
        if (request.segments().isEmpty()) {
            return request.sector() + request.dataBytes() / VirtioBlk.SECTOR_SIZE;
        }
        long end = 0;
        for (DiscardSegment s : request.segments()) {
            end = Math.max(end, s.sector() + s.numSectors()); // range-checked by the parser: no overflow
        }
        return end;
    }

    /**
     * One request between acceptance and completion, kept per descriptor head and reused for the next chain
     * with that head: its parsed request, its tracked-list entry and its continuations are made once. It is
     * never reused while its request is in flight: the queue pops a head again only after it was pushed
     * (section 2.7.13), which {@link #complete} does last, after the backend work and the tracked entry ended
     * (on whatever thread); {@link #busy} checks it.
     */
    private final class Slot {
        final BlkRequest request = new BlkRequest();
        final TrackedRequests.Request tracked = disk.tracked().newRequest(this::resume);
        /** Runs the backend work on a pool worker, then posts the completion. */
        private final Runnable onWorker = this::runAndPost;
        /** The completion, posted back to the I/O thread. */
        private final Runnable completion = this::completeHere;
        /** A deferred request resumed off the I/O thread, with a non-blocking backend: all of it on the I/O thread. */
        private final Runnable executeAndComplete = this::executeAndCompleteHere;
        /** Between acceptance and the used-ring push; I/O thread only. */
        boolean busy;
        /** Written by the thread that ran the backend work, read on the I/O thread after the hand-off. */
        Outcome outcome;

        /** The continuation of a deferred request; runs on whichever thread ended its last dependency. */
        void resume() {
            start(false);
        }

        /** Runs the backend work where it belongs, then hands the completion to the I/O thread. */
        void start(boolean onIoThread) {
            Executor pool = disk.pool();
            if (pool != null) {
                try {
                    pool.execute(onWorker);
                    return;
                } catch (RejectedExecutionException e) {
                    // The pool is shut down only after a reset that waited for us; answer anyway.
                    LOG.log(Level.ERROR, "disk " + disk.diskName() + ": worker pool refused a request");
                }
            }
            if (onIoThread) {
                outcome = executeTracked();
                complete(this);
            } else {
                context.post(executeAndComplete);
            }
        }

        private void runAndPost() {
            outcome = executeTracked();
            context.post(completion); // the queue's hand-off orders the outcome before its read
        }

        private void completeHere() {
            complete(this);
        }

        private void executeAndCompleteHere() {
            outcome = executeTracked();
            complete(this);
        }

        private Outcome executeTracked() {
            try {
                return execute(request);
            } finally {
                tracked.end();
            }
        }
    }

    /** The backend work; an internal error answers IOERR and latches a device error. Any thread. */
    private Outcome execute(BlkRequest request) {
        try {
            return disk.executor().run(request);
        } catch (RuntimeException e) {
            internalError(e);
            request.dataWritten(0);
            return Outcome.IOERR;
        }
    }

    /** Status byte and counters, used-ring push; the notification decision follows at batch end. */
    private void complete(Slot slot) {
        BlkRequest request = slot.request;
        Outcome outcome = slot.outcome;
        int used = disk.processor().finish(request, outcome, request.dataWritten(), batch);
        counters.inFlight--;
        if (outcome == Outcome.OK && (request.kind() == RequestType.IN || request.kind() == RequestType.OUT)) {
            counters.bytes += request.dataBytes();
        }
        int head = request.head();
        slot.busy = false; // the slot may serve the head's next chain once the push below returns
        try {
            // The element now; used.idx once per batch, in endBatch() (or before a notification decision).
            queue.pushUsedBatched(head, used);
        } finally {
            // Out of flight for a reset only once the batch's used index is published (endBatch): a reset then
            // reads this queue's indices, which must match the ring's (issue 13).
            unreleased++;
            context.markDirty(this);
        }
        channel.pushed();
    }

    /** I/O thread only: the batch of this queue ends; its strategy decides (or schedules) notifications. */
    void endBatch() {
        publishUsed();
        channel.endBatch();
    }

    /**
     * Publishes the used index of the batch's pushes (one release store), then counts their requests out of
     * flight: a reset that waits for them reads indices that match the ring's (issue 13). Runs at the batch's
     * end and before each notification decision (so before any interrupt). I/O thread only.
     */
    private void publishUsed() {
        try {
            // Counted before the used index carries them: a driver that sees a completion sees it counted.
            disk.processor().publish(batch);
            queue.publishUsed();
        } catch (GuestFaultException e) {
            fault(e);
        } finally {
            int n = unreleased;
            unreleased = 0;
            disk.processor().released(n);
            counters.publish(); // the queue's counters with the batch they count
        }
    }

    boolean stopped() {
        return stopped;
    }
}
