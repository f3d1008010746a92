package io.kickplug.blk.tracked;

import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.iothread.VirtualWaits;
import io.kickplug.api.lockstat.LockCounters;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock of one tracked-requests list. Held only for short, non-blocking critical sections (insert,
 * remove, scan); never across backend I/O.
 *
 * <p>In virtual time ({@link VirtualWaits#current()} not null on the calling thread) the same lock code runs, with
 * two scheduling points, before the acquisition and before the release, so the critical section is charged while
 * the lock is held and a thread due in that interval finds it held; a contended acquirer waits in virtual time
 * ({@link VirtualWaits#await}) where it would park, and is woken ({@link VirtualWaits#wake}) where it would be
 * unparked, after the modelled wake-up of a blocked thread ({@link VirtualWaits#wakeUpNanos()}).
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
        VirtualWaits v = VirtualWaits.current();
        long waitNanos;
        if (v == null) {
            waitNanos = acquire();
        } else {
            v.point(); // threads due before this acquisition run first: one of them may take the lock
            waitNanos = acquire(v);
        }
        long me = Thread.currentThread().getId();
        boolean bounce = lastOwner != -1 && lastOwner != me;
        lastOwner = me;
        if (waitNanos >= 0) {
            stats.contended(bounce);
        }
        stats.acquired(bounce, waitNanos);
        // The first, then 1 in 16; +1 keeps 0 for "not timed" when the virtual clock reads 0.
        acquiredAt = (acquisitions++ & (HOLD_SAMPLE - 1)) == 0 ? now(v) + 1 : 0;
    }

    final void unlock() {
        VirtualWaits v = VirtualWaits.current();
        if (v != null) {
            v.point(); // the critical section is charged with the lock held: threads due meanwhile find it held
        }
        long at = acquiredAt;
        if (at != 0) {
            stats.releasedSample(now(v) + 1 - at, HOLD_SAMPLE);
        }
        if (v == null) {
            release();
        } else {
            release(v);
        }
    }

    private static long now(VirtualWaits v) {
        return v == null ? System.nanoTime() : v.now();
    }

    /** Takes the lock; returns how long it waited for another holder, or -1 when it did not have to wait. */
    abstract long acquire();

    abstract void release();

    /** {@link #acquire()} in virtual time: a contended acquirer waits with {@code v}, the wait in virtual time. */
    abstract long acquire(VirtualWaits v);

    /** {@link #release()} in virtual time: wakes the waiters with {@code v}. */
    abstract void release(VirtualWaits v);

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

        /**
         * A contended acquirer blocks (a futex wait) until a release wakes it, then tries again; the lock is free
         * from the release on, so a thread due before the woken waiter runs may take it first.
         */
        @Override
        long acquire(VirtualWaits v) {
            if (lock.tryLock()) {
                return -1;
            }
            long start = v.now();
            do {
                v.await(this);
            } while (!lock.tryLock());
            return v.now() - start;
        }

        @Override
        void release(VirtualWaits v) {
            lock.unlock();
            v.wake(this, v.wakeUpNanos()); // the waiters (if any) were blocked: each pays a wake-up, then tries again
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
            Waiter me = enqueue();
            if (me == null) {
                return -1;
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

        /** Takes the lock when free (returns null), else queues the caller and returns its place. */
        private Waiter enqueue() {
            guard.lock();
            try {
                if (!held) {
                    held = true;
                    return null;
                }
                Waiter me = new Waiter();
                if (tail == null) {
                    head = me;
                } else {
                    tail.next = me;
                }
                tail = me;
                return me;
            } finally {
                guard.unlock();
            }
        }

        @Override
        void release() {
            Waiter next = handOff();
            if (next != null) {
                LockSupport.unpark(next.thread);
            }
        }

        /** Frees the lock, or hands it to the first waiter (returned): the lock then stays held, by the waiter. */
        private Waiter handOff() {
            guard.lock();
            try {
                Waiter next = head;
                if (next == null) {
                    held = false;
                } else {
                    head = next.next;
                    if (head == null) {
                        tail = null;
                    }
                    next.granted = true; // hand-off: the lock stays held, now by the waiter
                }
                return next;
            } finally {
                guard.unlock();
            }
        }

        /**
         * The contended acquirer queues and blocks (the coroutine yields) until the lock is handed to it; it holds
         * the lock from the hand-off on, and runs only after its wake-up.
         */
        @Override
        long acquire(VirtualWaits v) {
            Waiter me = enqueue();
            if (me == null) {
                return -1;
            }
            long start = v.now();
            while (!me.granted) {
                v.await(me);
            }
            return v.now() - start;
        }

        /** Hands the lock to the first waiter and wakes it: the lock stays held for the waiter's wake-up too. */
        @Override
        void release(VirtualWaits v) {
            Waiter next = handOff();
            if (next != null) {
                v.wake(next, v.wakeUpNanos());
                LockSupport.unpark(next.thread); // a waiter outside virtual time (none while it runs) parks on the host
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
