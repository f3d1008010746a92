package io.kickplug.blk.backend;

import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.BlockBackend;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

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
 */
public final class WorkerPoolBackend extends SyncBackends.Delegating {

    private static final Logger LOG = System.getLogger(WorkerPoolBackend.class.getName());

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

    /**
     * @param name the disk's name, for thread names
     * @param workers the most threads, at least 1
     */
    public WorkerPoolBackend(BlockBackend backend, String name, int workers) {
        super(backend);
        if (workers < 1) {
            throw new IllegalArgumentException("workers " + workers + " must be positive");
        }
        this.name = name;
        this.maxWorkers = workers;
        this.idle = new Worker[workers];
        this.all = new Worker[workers];
    }

    /** Queues {@code io}; it starts at the next {@link #unplug()}, or earlier when a worker is running. */
    @Override
    public void submit(BackendIo io) {
        boolean refused;
        lock.lock();
        try {
            refused = closed;
            if (!refused) {
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
        }
    }

    /** Wakes one parked worker per queued operation, starting new workers when too few are parked. */
    @Override
    public void unplug() {
        lock.lock();
        try {
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
