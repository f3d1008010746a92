package io.kickplug.blk.device;

import io.kickplug.blk.request.Outcome;
import io.kickplug.blk.request.RequestType;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Request counters of one disk, kept across device resets. Thread-safe. A queue's I/O thread counts into its own
 * {@link Batch} with plain fields and publishes it with release stores of the queue's totals ({@link #publish}) and
 * one atomic update of the in-flight count per batch at most ({@link #settle}): no atomic per request.
 */
public final class BlkStats {

    /**
     * Counts of one queue's requests since its last {@link #publish}; plain fields, owned by the queue's I/O
     * thread.
     */
    static final class Batch {
        /** Read by {@link BlkStats#requestsInFlight()} from other threads without synchronisation (diagnostics). */
        int begun;
        int completed;
        int ioErrors;
        int unsupported;
        long bytesRead;
        long bytesWritten;
        /** Published totals of this queue: written by its I/O thread only ({@link BlkStats#publish}). */
        @SuppressWarnings("unused")
        private long totalCompleted;
        @SuppressWarnings("unused")
        private long totalIoErrors;
        @SuppressWarnings("unused")
        private long totalUnsupported;
        @SuppressWarnings("unused")
        private long totalBytesRead;
        @SuppressWarnings("unused")
        private long totalBytesWritten;

        /** A request was taken from the queue. */
        void begin() {
            begun++;
        }

        /** A request taken in this batch was abandoned (malformed chain): it was never in flight. */
        void abandon() {
            begun--;
        }

        /** As {@link BlkStats#complete}, counted here. */
        void complete(RequestType kind, Outcome outcome, long diskBytes) {
            completed++;
            switch (outcome) {
                case IOERR -> ioErrors++;
                case UNSUPP -> unsupported++;
                case OK -> {
                    if (kind == RequestType.IN) {
                        bytesRead += diskBytes;
                    } else if (kind == RequestType.OUT) {
                        bytesWritten += diskBytes;
                    }
                }
            }
        }
    }

    private static final VarHandle TOTAL_COMPLETED;
    private static final VarHandle TOTAL_IO_ERRORS;
    private static final VarHandle TOTAL_UNSUPPORTED;
    private static final VarHandle TOTAL_BYTES_READ;
    private static final VarHandle TOTAL_BYTES_WRITTEN;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            TOTAL_COMPLETED = l.findVarHandle(Batch.class, "totalCompleted", long.class);
            TOTAL_IO_ERRORS = l.findVarHandle(Batch.class, "totalIoErrors", long.class);
            TOTAL_UNSUPPORTED = l.findVarHandle(Batch.class, "totalUnsupported", long.class);
            TOTAL_BYTES_READ = l.findVarHandle(Batch.class, "totalBytesRead", long.class);
            TOTAL_BYTES_WRITTEN = l.findVarHandle(Batch.class, "totalBytesWritten", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Each queue's batch, reused by every activation of the queue (one activation at a time). */
    private final java.util.Map<Integer, Batch> batches = new java.util.HashMap<>();
    private volatile Batch[] batchList = new Batch[0];

    /** The batch of queue {@code queue}; its I/O thread alone counts into it while the queue is active. */
    synchronized Batch batch(int queue) {
        Batch b = batches.get(queue);
        if (b == null) {
            b = new Batch();
            batches.put(queue, b);
            Batch[] list = java.util.Arrays.copyOf(batchList, batchList.length + 1);
            list[list.length - 1] = b;
            batchList = list;
        }
        return b;
    }

    /**
     * Adds a batch's completion counts to its queue's totals and clears them: release stores of fields that only
     * the queue's I/O thread writes, so no atomic read-modify-write; readers sum the totals with acquire loads.
     * Call before the used index that carries the completions is published (a driver that sees a completion sees
     * it counted). The requests taken are counted in flight by {@link #settle}.
     */
    void publish(Batch b) {
        if (b.completed == 0) {
            return;
        }
        TOTAL_COMPLETED.setRelease(b, b.totalCompleted + b.completed);
        if (b.ioErrors != 0) {
            TOTAL_IO_ERRORS.setRelease(b, b.totalIoErrors + b.ioErrors);
        }
        if (b.unsupported != 0) {
            TOTAL_UNSUPPORTED.setRelease(b, b.totalUnsupported + b.unsupported);
        }
        if (b.bytesRead != 0) {
            TOTAL_BYTES_READ.setRelease(b, b.totalBytesRead + b.bytesRead);
        }
        if (b.bytesWritten != 0) {
            TOTAL_BYTES_WRITTEN.setRelease(b, b.totalBytesWritten + b.bytesWritten);
        }
        b.completed = 0;
        b.ioErrors = 0;
        b.unsupported = 0;
        b.bytesRead = 0;
        b.bytesWritten = 0;
    }

    /**
     * Counts the batch's requests taken as in flight and {@code released} of its requests (already in a published
     * used index) out of flight, in one atomic update of the net change, none when they cancel out (a request
     * taken and completed in one batch). Call after the used index that carries the released ones is published
     * (a reset that waits in {@link #awaitIdle} then reads indices that match the ring's, issue 13), and at the
     * end of each drain for the requests still in flight, before any completion of theirs can be released.
     */
    void settle(Batch b, int released) {
        long delta = b.begun - (long) released;
        b.begun = 0;
        if (delta != 0 && inFlight.addAndGet(delta) == 0 && idleWaiters > 0) {
            synchronized (idle) {
                idle.notifyAll();
            }
        }
    }

    private static long sum(LongAdder adder, VarHandle total, Batch[] list) {
        long n = adder.sum();
        for (Batch b : list) {
            n += (long) total.getAcquire(b); // pairs with publish()'s release store
        }
        return n;
    }

    private final LongAdder completed = new LongAdder();
    private final LongAdder ioErrors = new LongAdder();
    private final LongAdder unsupported = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final AtomicLong inFlight = new AtomicLong();
    private final Object idle = new Object();
    private volatile int idleWaiters;

    /** A request was taken from a queue. */
    void begin() {
        inFlight.incrementAndGet();
    }

    /**
     * A request ended with {@code outcome}; {@code diskBytes} moved to or from the backend. It stays in flight
     * until {@link #released()}: its chain is not back with the driver yet.
     */
    void complete(RequestType kind, Outcome outcome, long diskBytes) {
        completed.increment();
        switch (outcome) {
            case IOERR -> ioErrors.increment();
            case UNSUPP -> unsupported.increment();
            case OK -> {
                if (kind == RequestType.IN) {
                    bytesRead.add(diskBytes);
                } else if (kind == RequestType.OUT) {
                    bytesWritten.add(diskBytes);
                }
            }
        }
    }

    /**
     * A completed request's chain is in the used ring (or the ring is broken): the request is no longer in
     * flight. A reset that waits in {@link #awaitIdle} then reads each queue's indices, so this must come
     * after the used-ring push: counted out before it, a reset saved a used index one short and the next
     * activation wrote over the pushed entry (issue 13: a completion lost across a vhost-user restart).
     */
    void released() {
        end();
    }

    /** {@code n} requests were released at once (a batch whose used index was published): one atomic update. */
    void released(int n) {
        if (n > 0 && inFlight.addAndGet(-n) == 0 && idleWaiters > 0) {
            synchronized (idle) {
                idle.notifyAll();
            }
        }
    }

    /** A request was taken but never completed, because its chain was malformed. */
    void abandon() {
        end();
    }

    private void end() {
        if (inFlight.decrementAndGet() == 0 && idleWaiters > 0) {
            synchronized (idle) {
                idle.notifyAll();
            }
        }
    }

    /** Waits until no request is in flight; returns false on timeout. */
    boolean awaitIdle(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        synchronized (idle) {
            idleWaiters++;
            try {
                while (inFlight.get() != 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    TimeUnit.NANOSECONDS.timedWait(idle, left);
                }
                return true;
            } finally {
                idleWaiters--;
            }
        }
    }

    public long requestsCompleted() {
        return sum(completed, TOTAL_COMPLETED, batchList);
    }

    /**
     * Requests taken and not yet released: the published count plus what the queues' I/O threads have taken in
     * their current batches (read without synchronisation: a diagnostic figure; {@link #awaitIdle} uses only
     * the published count, after every I/O thread published its batch).
     */
    public long requestsInFlight() {
        long n = inFlight.get();
        for (Batch b : batchList) {
            n += b.begun;
        }
        return n;
    }

    public long ioErrors() {
        return sum(ioErrors, TOTAL_IO_ERRORS, batchList);
    }

    public long unsupported() {
        return sum(unsupported, TOTAL_UNSUPPORTED, batchList);
    }

    public long bytesRead() {
        return sum(bytesRead, TOTAL_BYTES_READ, batchList);
    }

    public long bytesWritten() {
        return sum(bytesWritten, TOTAL_BYTES_WRITTEN, batchList);
    }
}
