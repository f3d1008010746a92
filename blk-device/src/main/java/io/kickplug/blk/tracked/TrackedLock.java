package io.kickplug.blk.tracked;

import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.lockstat.LockCounters;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock of one tracked-requests list. Held only for short, non-blocking critical sections (insert,
 * remove, scan); never across backend I/O.
 */
abstract class TrackedLock {

    /**
     * Hold times are timed for one acquisition in this many (two {@code System.nanoTime} calls each), and
     * counted with this weight in the hold-time total; waits of contended acquisitions are always timed.
     */
    static final int HOLD_SAMPLE = 16;

    protected final LockCounters stats;
    /** Written and read by the holder only; 0 when this acquisition is not timed. */
    private long acquiredAt;
    /** Acquisitions so far, to pick the timed ones; written and read by the holder only. */
    private int acquisitions;
    /** Id of the thread that acquired the lock last; written and read by the holder only. */
    private long lastOwner = -1;

    TrackedLock(LockCounters stats) {
        this.stats = stats;
    }

    static TrackedLock create(TrackedLockKind kind, LockCounters stats) {
        return kind == TrackedLockKind.YIELDING ? new Yielding(stats) : new Mutex(stats);
    }

    final void lock() {
        long waitNanos = acquire();
        long me = Thread.currentThread().getId();
        boolean bounce = lastOwner != -1 && lastOwner != me;
        lastOwner = me;
        if (waitNanos >= 0) {
            stats.contended(bounce);
        }
        stats.acquired(bounce, waitNanos);
        acquiredAt = (acquisitions++ & (HOLD_SAMPLE - 1)) == 0 ? System.nanoTime() : 0; // the first, then 1 in 16
    }

    final void unlock() {
        long at = acquiredAt;
        if (at != 0) {
            stats.releasedSample(System.nanoTime() - at, HOLD_SAMPLE);
        }
        release();
    }

    /** Takes the lock; returns how long it waited for another holder, or -1 when it did not have to wait. */
    abstract long acquire();

    abstract void release();

    /** QEMU's QemuMutex after seed 004: a plain mutex; contenders spin briefly, then block. */
    static final class Mutex extends TrackedLock {
        private final ReentrantLock lock = new ReentrantLock();

        Mutex(LockCounters stats) {
            super(stats);
        }

        @Override
        long acquire() {
            if (lock.tryLock()) {
                return -1;
            }
            long start = System.nanoTime();
            lock.lock();
            return System.nanoTime() - start;
        }

        @Override
        void release() {
            lock.unlock();
        }
    }

    /**
     * QEMU's CoMutex before seed 004: a contender queues itself FIFO and parks (the coroutine yields);
     * unlock hands ownership straight to the first waiter and wakes it, so the lock stays held, and every
     * later contender queues, until that waiter has been scheduled again.
     */
    static final class Yielding extends TrackedLock {

        private static final class Waiter {
            final Thread thread = Thread.currentThread();
            volatile boolean granted;
            Waiter next;
        }

        /** Guards {@link #held} and the waiter queue; held for a few instructions only. */
        private final ReentrantLock guard = new ReentrantLock();
        private boolean held;
        private Waiter head;
        private Waiter tail;

        Yielding(LockCounters stats) {
            super(stats);
        }

        @Override
        long acquire() {
            Waiter me;
            guard.lock();
            try {
                if (!held) {
                    held = true;
                    return -1;
                }
                me = new Waiter();
                if (tail == null) {
                    head = me;
                } else {
                    tail.next = me;
                }
                tail = me;
            } finally {
                guard.unlock();
            }
            long start = System.nanoTime();
            boolean interrupted = false;
            while (!me.granted) {
                LockSupport.park(this);
                if (Thread.interrupted()) {
                    interrupted = true; // keep waiting: the lock will be handed to us
                }
            }
            long waited = System.nanoTime() - start;
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return waited;
        }

        @Override
        void release() {
            Waiter next;
            guard.lock();
            try {
                next = head;
                if (next == null) {
                    held = false;
                } else {
                    head = next.next;
                    if (head == null) {
                        tail = null;
                    }
                    next.granted = true; // hand-off: the lock stays held, now by the waiter
                }
            } finally {
                guard.unlock();
            }
            if (next != null) {
                LockSupport.unpark(next.thread);
            }
        }

        /** Waiters queued now, for tests. */
        int queued() {
            guard.lock();
            try {
                int n = 0;
                for (Waiter w = head; w != null; w = w.next) {
                    n++;
                }
                return n;
            } finally {
                guard.unlock();
            }
        }
    }
}
