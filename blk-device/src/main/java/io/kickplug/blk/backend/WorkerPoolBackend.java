package io.kickplug.blk.backend;

import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DelegatingAsyncBackend;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * A blocking backend behind the asynchronous contract: operations run on up to {@code workers} threads of the
 * disk's own, QEMU's thread pool (aio=threads) in shape. The hand-off is batched:
 * <ul>
 * <li>{@link #submit} only queues (one uncontended lock, no allocation: the queue is an array ring that grows to
 * the largest batch once);</li>
 * <li>{@link #unplug} at the end of the device's batch wakes one worker (or starts one, up to {@code workers}),
 * and only when no woken worker is on its way already;</li>
 * <li>a worker that takes an operation and sees more queued wakes the next one, so the pool grows to the
 * parallelism the operations need: operations that are fast next to a wake-up (page-cache hits) are run by one or
 * two workers back to back, with no wake-up per request; slow ones (a disk) soon have a worker each;</li>
 * <li>a worker takes the next operation before it parks, so while the queue has work a busy worker costs no
 * wake-up at all.</li>
 * </ul>
 * (QEMU's pool posts its semaphore once per request, which wakes a worker per request.)
 * Completions are {@link BackendIo#complete} calls from the worker; the device hands them to its I/O thread.
 *
 * <p>With {@code inlineWhenFast} (a page-cache file), the first operation of a batch (since the last
 * {@link #unplug}) that finds the pool idle (nothing queued, every started worker parked) runs on the submitting
 * thread instead, as io_uring runs a buffered read that hits the page cache inside {@code io_uring_enter} and hands
 * only the rest to its workers: at queue depth 1 the two wake-ups of a hand-off (worker, then back to the I/O thread)
 * cost more than the copy. The rest of a batch goes to the workers, so a deep queue keeps the parallelism of a worker
 * beside the I/O thread (inlining every operation of a batch of 64 page-cache reads made one thread do them all:
 * 0.75x the IOPS on 2 cores). Only reads and writes without FUA of at most {@value #INLINE_MAX_BYTES} bytes run
 * inline; one that takes longer than {@value #INLINE_SLOW_NS} ns (it went to the disk) closes the inline path for
 * {@value #INLINE_PAUSE_NS} ns, so a cold or slow file stalls its I/O thread at most once per pause.
 */
public final class WorkerPoolBackend extends DelegatingAsyncBackend {

    private static final Logger LOG = System.getLogger(WorkerPoolBackend.class.getName());

    /** The largest operation that may run inline: a 64 KiB page-cache copy takes a few microseconds. */
    static final long INLINE_MAX_BYTES = 64 * 1024;
    /** An inline operation slower than this went past the page cache. */
    static final long INLINE_SLOW_NS = 50_000;
    /** How long the inline path stays closed after a slow inline operation. */
    static final long INLINE_PAUSE_NS = 10_000_000;

    private final String name;
    private final int maxWorkers;
    private final ReentrantLock lock = new ReentrantLock();
    /** Queued operations, a ring; under {@link #lock}. */
    private BackendIo[] ring = new BackendIo[64];
    private int head;
    private int count;
    /** Parked workers, a stack; under {@link #lock}. */
    private final Worker[] idle;
    private int idleCount;
    private final Worker[] all;
    private int started;
    /** A worker was woken (or started) and has not taken work yet; under {@link #lock}. */
    private boolean waking;
    private boolean closed;
    /** An operation of the current batch ran inline; under {@link #lock}, cleared by {@link #unplug}. */
    private boolean inlinedInBatch;
    private final boolean inlineWhenFast;
    private final LongSupplier nanoClock;
    /** The inline path is closed before this {@link #nanoClock} time; written after a slow inline operation. */
    private volatile long inlineClosedUntil;
    /** Operations that ran inline; a plain field the submitting thread bumps, read for tests only. */
    private long inlineRuns;

    /**
     * @param name the disk's name, for thread names
     * @param workers the most threads, at least 1
     */
    public WorkerPoolBackend(BlockBackend backend, String name, int workers) {
        this(backend, name, workers, false, System::nanoTime);
    }

    /**
     * @param inlineWhenFast whether small reads and writes that find the pool idle run on the submitting thread
     *     while they stay fast (a file in the page cache; never one opened with O_DIRECT, nor a backend with a
     *     latency of its own)
     * @param nanoClock the clock that times inline operations ({@code System::nanoTime}; tests pass their own)
     */
    WorkerPoolBackend(BlockBackend backend, String name, int workers, boolean inlineWhenFast, LongSupplier nanoClock) {
        super(backend);
        if (workers < 1) {
            throw new IllegalArgumentException("workers " + workers + " must be positive");
        }
        this.name = name;
        this.maxWorkers = workers;
        this.idle = new Worker[workers];
        this.all = new Worker[workers];
        this.inlineWhenFast = inlineWhenFast;
        this.nanoClock = nanoClock;
        this.inlineClosedUntil = nanoClock.getAsLong();
    }

    /** Queues {@code io}; it starts at the next {@link #unplug()}, or earlier when a worker is running. */
    @Override
    public void submit(BackendIo io) {
        boolean refused;
        boolean inline = false;
        long start = 0;
        lock.lock();
        try {
            refused = closed;
            // Idle: nothing queued, no worker on its way or running an operation (every started one is parked). The
            // clock is read only then: the rest of a batch, and every operation of a busy pool, never reads it.
            if (inlineWhenFast && !refused && !inlinedInBatch && count == 0 && !waking && idleCount == started
                    && inlineEligible(io)) {
                start = nanoClock.getAsLong();
                inline = start - inlineClosedUntil >= 0; // compared as a difference: nanoTime may wrap
            }
            if (inline) {
                inlinedInBatch = true;
            } else if (!refused) {
                if (count == ring.length) {
                    BackendIo[] bigger = new BackendIo[ring.length * 2];
                    for (int i = 0; i < count; i++) {
                        bigger[i] = ring[(head + i) & (ring.length - 1)];
                    }
                    ring = bigger;
                    head = 0;
                }
                ring[(head + count) & (ring.length - 1)] = io;
                count++;
            }
        } finally {
            lock.unlock();
        }
        if (refused) {
            io.complete(new IOException("the worker pool of disk " + name + " is closed"));
        } else if (inline) {
            runInline(io, start);
        }
    }

    /**
     * A read or write without FUA, small enough to be a page-cache copy, on a thread whose interrupt status is clear
     * (an interrupt during FileChannel I/O closes the channel for good).
     */
    private static boolean inlineEligible(BackendIo io) {
        BackendIo.Op op = io.op();
        return (op == BackendIo.Op.READ || op == BackendIo.Op.WRITE) && !io.fua()
                && io.length() <= INLINE_MAX_BYTES && !Thread.currentThread().isInterrupted();
    }

    private void runInline(BackendIo io, long start) {
        IOException error = SyncBackends.perform(backend, io);
        long end = nanoClock.getAsLong();
        if (end - start > INLINE_SLOW_NS) {
            inlineClosedUntil = end + INLINE_PAUSE_NS; // it went to the disk: hand the next ones to the workers
        }
        inlineRuns++; // racy across submitting threads; a statistic, never a decision
        io.complete(error);
    }

    /** Operations that ran on the submitting thread (inline path); exact when read on that thread. For tests. */
    long inlineRuns() {
        return inlineRuns;
    }

    /** Wakes one parked worker per queued operation, starting new workers when too few are parked. */
    @Override
    public void unplug() {
        lock.lock();
        try {
            inlinedInBatch = false;
            if (count > 0) {
                wakeOne();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Wakes a parked worker, or starts one, unless one is on its way already. Under {@link #lock}. */
    private void wakeOne() {
        if (waking || closed) {
            return;
        }
        if (idleCount > 0) {
            Worker w = idle[--idleCount];
            idle[idleCount] = null;
            w.parked = false;
            waking = true;
            LockSupport.unpark(w.thread);
        } else if (started < maxWorkers) {
            Worker w = new Worker(started);
            all[started++] = w;
            waking = true;
            w.thread.start();
        }
    }

    /** Worker threads started so far (they stay until {@link #close}). */
    public int threads() {
        lock.lock();
        try {
            return started;
        } finally {
            lock.unlock();
        }
    }

    /** Stops the workers after the queued operations ran; waits for them up to 10 s. The backend stays open. */
    @Override
    public void close() {
        Worker[] workers;
        lock.lock();
        try {
            closed = true;
            workers = Arrays.copyOf(all, started);
            for (int i = 0; i < idleCount; i++) {
                idle[i].parked = false;
                LockSupport.unpark(idle[i].thread);
                idle[i] = null;
            }
            idleCount = 0;
        } finally {
            lock.unlock();
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        for (Worker w : workers) {
            try {
                long left = deadline - System.nanoTime();
                if (left > 0) {
                    w.thread.join(Math.max(1, left / 1_000_000));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (w.thread.isAlive()) {
                LOG.log(Level.ERROR, "disk " + name + ": worker " + w.thread.getName() + " did not stop in 10 s");
            }
        }
    }

    /** The next queued operation, or {@code null} after parking {@code me} (or when closed). */
    private BackendIo takeOrPark(Worker me, boolean woken) {
        lock.lock();
        try {
            if (woken) {
                waking = false;
            }
            if (count > 0) {
                BackendIo io = ring[head];
                ring[head] = null;
                head = (head + 1) & (ring.length - 1);
                count--;
                if (count > 0) {
                    wakeOne(); // more work than this worker: the next one joins (one wake-up in flight at a time)
                }
                return io;
            }
            if (!closed) {
                me.parked = true;
                idle[idleCount++] = me;
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    private final class Worker implements Runnable {

        final Thread thread;
        /** Set under the lock when pushed on the idle stack, cleared by whoever pops it; read while parking. */
        volatile boolean parked;

        Worker(int index) {
            thread = new Thread(this, "kickplug-blk-" + name + "-worker" + index);
            thread.setDaemon(true);
        }

        @Override
        public void run() {
            boolean woken = true; // started by wakeOne()
            for (;;) {
                BackendIo io = takeOrPark(this, woken);
                woken = false;
                if (io != null) {
                    io.complete(SyncBackends.perform(backend, io));
                    continue;
                }
                // Parked: wait until unplug() or close() pops us (a spurious wake-up just waits again).
                while (parked) {
                    LockSupport.park(this);
                }
                woken = true;
                lock.lock();
                try {
                    if (closed && count == 0) {
                        return;
                    }
                } finally {
                    lock.unlock();
                }
            }
        }
    }
}
