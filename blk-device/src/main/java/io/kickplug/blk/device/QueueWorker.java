package io.kickplug.blk.device;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendIo;
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
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.function.BooleanSupplier;

/**
 * Serves one virtqueue on its I/O thread: the handler of the queue's {@link io.kickplug.api.iothread.IoSource}.
 *
 * <p>Pipeline of one request: the I/O thread pops and parses the chain and registers the request in the
 * disk's tracked list; once nothing it depends on is in flight, its backend operations are submitted to the
 * disk's {@link AsyncBlockBackend} (one per step: a write, then a flush in writethrough mode; one per segment of a
 * discard), which completes them on whatever thread it likes (inline for memory and null, a worker for a file, a
 * socket reader for NBD); the backend is unplugged once per drain, so a batch of requests is one hand-off. The
 * completion (status byte,
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

    /** What the queues of one disk share. */
    record Shared(String diskName, RequestProcessor processor, RequestExecutor executor, TrackedRequests tracked,
            AsyncBlockBackend backend, BlkMode mode) {
    }

    private static final ByteBuffer[] NO_BUFFERS = new ByteBuffer[0];

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
    /** Inside {@link #acceptAndComplete}: requests that end meanwhile wait for {@link #completeEnded}. */
    private boolean accepting;
    /** Requests that ended inside {@link #accept}, oldest first, linked through {@link Slot#nextEnded}. */
    private Slot endedFirst;
    private Slot endedLast;
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
    /** Inside drain(): submissions wait for the unplug at the drain's end; I/O thread only. */
    private boolean draining;
    /** Operations submitted in this drain and not unplugged yet; I/O thread only. */
    private boolean plugged;

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
        notifications(false);
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
        notifications(true);
    }

    /**
     * Turns the driver's available-buffer notifications on or off (section 2.7.10) unless the worker stopped; a
     * guest fault met on the way breaks the queue as any other does.
     */
    private void notifications(boolean on) {
        if (stopped) {
            return;
        }
        try {
            if (on) {
                queue.enableNotification();
            } else {
                queue.disableNotification();
            }
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
        draining = true;
        try {
            if (polling) {
                DescriptorChain chain;
                while (!stopping.getAsBoolean() && (chain = queue.pop()) != null) {
                    chains++;
                    acceptAndComplete(chain);
                }
                unplug();
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
                    acceptAndComplete(chain);
                }
                unplug(); // the batch's backend operations start together: one hand-off
                // The batch ends: each dirty queue's strategy makes or schedules its decisions (2.7.7.2).
                context.notifyDirty();
            } while (!stopping.getAsBoolean() && queue.enableNotification());
        } finally {
            draining = false;
            unplug(); // after a fault too: a held operation would never complete, and a reset would wait for it
            counters.handlerRan(chains);
            // Requests taken and not completed in this run (a worker pool's) are in flight from now on, before
            // any completion of theirs can be released.
            disk.processor().publish(batch);
            disk.processor().settle(batch, 0);
        }
    }

    /**
     * {@link #accept}, then the completion of the requests that ended inside it ({@link #completeEnded}). The
     * header's load starts first ({@link DescriptorChain#prefetch}): at null QD64 its cache miss was a fifth of the
     * I/O thread's time, in the parser's first read. (Popping up to 16 chains and prefetching them together
     * overlapped the misses better, but completions then came in bursts of a batch, and at QD32 the front-end and
     * the I/O thread fell into sleeping in turn: 0.9M IOPS instead of 1.3M.) I/O thread only.
     */
    private void acceptAndComplete(DescriptorChain chain) {
        chain.prefetch();
        accepting = true;
        try {
            accept(chain);
        } finally {
            accepting = false;
            completeEnded();
        }
    }

    /**
     * Completes, in the order they ended, the requests that ended on this thread inside {@link #accept} (a backend
     * that completes inline, as null and memory do): from the drain loop rather than from inside the backend's
     * submit, so the completion (used-ring push, notification decision) does not run a dozen calls deeper, past
     * what the JIT inlines. I/O thread only.
     */
    private void completeEnded() {
        Slot slot;
        while ((slot = endedFirst) != null) {
            endedFirst = slot.nextEnded;
            slot.nextEnded = null;
            if (endedFirst == null) {
                endedLast = null;
            }
            complete(slot);
        }
    }

    /** Starts the operations this drain submitted. I/O thread only. */
    private void unplug() {
        if (plugged) {
            plugged = false;
            disk.backend().unplug();
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
        if (disk.tracked().beginOrDefer(slot.tracked, access, first(request), end(request), context.index())) {
            slot.begun();
        } // else it waits for the yielding lock without blocking this thread, and begun() runs here later
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
     * with that head: its parsed request, its tracked-list entry, its continuations and its backend operation
     * ({@link BackendIo}, one step at a time) are made once. It is never reused while its request is in flight:
     * the queue pops a head again only after it was pushed (section 2.7.13), which {@link #complete} does last,
     * after the backend work and the tracked entry ended (on whatever thread); {@link #busy} checks it.
     */
    private final class Slot implements BackendIo {
        final BlkRequest request = new BlkRequest();
        final TrackedRequests.Request tracked = disk.tracked().newRequest(this::resume, context::post, this::begun,
                this::ended);
        /** The completion, posted back to the I/O thread. */
        private final Runnable completion = this::completeHere;
        /** A deferred request resumed off the I/O thread: its first operation is submitted on the I/O thread. */
        private final Runnable startHere = this::startOnIoThread;
        /** Between acceptance and the used-ring push; I/O thread only. */
        boolean busy;
        /** The next request that ended inside the same accept ({@link #completeEnded}); I/O thread only. */
        Slot nextEnded;
        /** Written by the thread that ended the backend work, read on the I/O thread after the hand-off. */
        Outcome outcome;
        // The current backend operation; written before submit, read by the backend until it completes.
        private Op op;
        private long offset;
        private long length;
        private ByteBuffer[] buffers = NO_BUFFERS;
        private boolean fua;
        private boolean mayUnmap;
        /** The next discard segment to submit; then whether a writethrough flush is still due. */
        private int segment;
        private boolean flushDue;

        /** Registered in the tracked list: it starts now unless it waits for an earlier request. I/O thread only. */
        void begun() {
            if (tracked.arm()) {
                start();
            }
        }

        /** The continuation of a deferred request; runs on whichever thread ended its last dependency. */
        void resume() {
            if (context.thread().inLoop()) {
                start();
            } else {
                context.post(startHere);
            }
        }

        private void startOnIoThread() {
            start();
        }

        /** Plans the request's first backend operation and submits it. I/O thread only. */
        void start() {
            outcome = Outcome.OK;
            request.dataWritten(0);
            fua = false;
            mayUnmap = false;
            buffers = NO_BUFFERS;
            segment = 0;
            switch (request.kind()) {
                case IN:
                    buffers = request.sink().views(request.dataBytes());
                    set(Op.READ, request.offset(), request.dataBytes());
                    flushDue = false;
                    break;
                case OUT:
                    buffers = request.source().views(request.dataBytes());
                    set(Op.WRITE, request.offset(), request.dataBytes());
                    // 5.2.6.2: without a write cache a completed write is stable: FUA when offered, else a flush.
                    boolean writeThrough = !disk.mode().writeCache();
                    fua = writeThrough && disk.backend().supportsFua();
                    flushDue = writeThrough && !fua;
                    break;
                case FLUSH:
                    set(Op.FLUSH, 0, 0);
                    flushDue = false;
                    break;
                case DISCARD:
                case WRITE_ZEROES:
                case SECURE_ERASE:
                    // SECURE_ERASE is always flushed: the old data must be gone when it completes.
                    flushDue = request.kind() == RequestType.SECURE_ERASE || !disk.mode().writeCache();
                    if (!nextSegment()) {
                        if (flushDue) {
                            flushDue = false;
                            set(Op.FLUSH, 0, 0);
                        } else {
                            finish();
                            return;
                        }
                    }
                    break;
                default:
                    outcome = Outcome.IOERR; // access() lets only the kinds above reach here
                    finish();
                    return;
            }
            submit();
        }

        private void set(Op op, long offset, long length) {
            this.op = op;
            this.offset = offset;
            this.length = length;
        }

        /** Sets up the next non-empty segment's operation; false when none is left. */
        private boolean nextSegment() {
            List<DiscardSegment> segments = request.segments();
            while (segment < segments.size()) {
                DiscardSegment s = segments.get(segment++);
                if (s.numSectors() == 0) {
                    continue;
                }
                buffers = NO_BUFFERS;
                switch (request.kind()) {
                    case DISCARD:
                        set(Op.DISCARD, s.offset(), s.bytes());
                        mayUnmap = true;
                        break;
                    case WRITE_ZEROES:
                        set(Op.WRITE_ZEROES, s.offset(), s.bytes());
                        // 5.2.6.2: the unmap flag may deallocate only when write_zeroes_may_unmap says so.
                        mayUnmap = s.unmap() && disk.mode().limits().writeZeroesMayUnmap();
                        break;
                    default:
                        set(Op.WRITE_ZEROES, s.offset(), s.bytes());
                        mayUnmap = false;
                        break;
                }
                return true;
            }
            return false;
        }

        /** Submits the current operation; in a drain it starts at the drain's unplug, otherwise at once. */
        private void submit() {
            AsyncBlockBackend backend = disk.backend();
            boolean inDrain = draining && context.thread().inLoop();
            try {
                backend.submit(this);
            } catch (RuntimeException e) {
                // The contract says failures come through complete(); a backend that throws is still answered.
                complete(new IOException("the " + backend.kind() + " backend refused the operation: " + e, e));
                return;
            }
            if (inDrain) {
                plugged = true;
            } else {
                backend.unplug();
            }
        }

        @Override
        public Op op() {
            return op;
        }

        @Override
        public long offset() {
            return offset;
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public ByteBuffer[] buffers() {
            return buffers;
        }

        @Override
        public boolean fua() {
            return fua;
        }

        @Override
        public boolean mayUnmap() {
            return mayUnmap;
        }

        /** The backend ended the current operation (any thread): the next step, or the request's completion. */
        @Override
        public void complete(IOException error) {
            if (error != null) {
                backendFailed(error);
                finish();
                return;
            }
            if (op == Op.READ) {
                request.dataWritten(request.dataBytes());
            }
            if (op == Op.DISCARD || op == Op.WRITE_ZEROES) {
                if (nextSegment()) {
                    submit();
                    return;
                }
            }
            if (flushDue) {
                flushDue = false;
                buffers = NO_BUFFERS;
                fua = false;
                set(Op.FLUSH, 0, 0);
                submit();
                return;
            }
            finish();
        }

        private void backendFailed(IOException error) {
            String what = op == Op.FLUSH && request.kind() != RequestType.FLUSH ? "flush after "
                    + request.kind().name().toLowerCase(Locale.ROOT) : request.kind().name().toLowerCase(Locale.ROOT);
            LOG.log(Level.WARNING, "disk " + disk.diskName() + ": " + what + " of " + request.dataBytes()
                    + " bytes at sector " + Long.toUnsignedString(request.sector()) + " failed: " + error.getMessage());
            request.dataWritten(0);
            outcome = Outcome.IOERR;
        }

        /** The backend work is over: end the tracked entry, then complete on the I/O thread. Any thread. */
        private void finish() {
            if (tracked.endOrDefer()) {
                ended();
            } // else it waits for the yielding lock, and ended() runs on the I/O thread once it has ended
        }

        /** The tracked entry has ended: complete on the I/O thread. Any thread. */
        private void ended() {
            if (context.thread().inLoop()) {
                if (accepting) {
                    // Inside the drain's accept: completed by completeEnded() right after it, in this order.
                    if (endedLast == null) {
                        endedFirst = this;
                    } else {
                        endedLast.nextEnded = this;
                    }
                    endedLast = this;
                    return;
                }
                QueueWorker.this.complete(this);
            } else {
                context.post(completion); // the queue's hand-off orders the outcome before its read
            }
        }

        private void completeHere() {
            QueueWorker.this.complete(this);
        }
    }

    /** A request answered without the backend (refused, GET_ID, GET_LIFETIME); an internal error answers IOERR. */
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
            // After the used index: the batch's requests taken in, the published ones out of flight, one atomic
            // update of the difference at most (none for requests taken and completed in this batch).
            disk.processor().settle(batch, n);
            counters.publish(); // the queue's counters with the batch they count
        }
    }
}
