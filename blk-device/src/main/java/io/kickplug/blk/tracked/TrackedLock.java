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
 * unparked, after the modelled wake-up of a blocked thread ({@link VirtualWaits#wakeUpNanos()}). A request queued by
 * {@link #lockOrQueue} waits in no thread at all: its continuation is posted to its I/O thread at the hand-off.
 */
abstract class TrackedLock {

    /** The context of a holder that took the lock with {@link #lock()}: no contender's. */
    static final int NO_CONTEXT = -1;

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
    /**
     * Whether several I/O threads share this lock's list (a mutex or yielding lock of a disk with more than one I/O
     * thread; not a sharded lock's per-thread shard): under model charging its critical section then pays the
     * cross-core cost of the list update ({@link VirtualWaits#chargeCriticalSection()}).
     */
    private final boolean shared;

    TrackedLock(LockCounters stats, boolean shared) {
        this.stats = stats;
        this.shared = shared;
    }

    /** @param shared whether several I/O threads share the lock's list ({@link #shared}) */
    static TrackedLock create(TrackedLockKind kind, LockCounters stats, boolean shared) {
        return kind == TrackedLockKind.YIELDING ? new Yielding(stats, shared) : new Mutex(stats, shared);
    }

    /** A place in a yielding lock's FIFO queue of waiters. */
    abstract static class Node {
        /** Guarded by the lock's guard. */
        Node next;
    }

    /**
     * A waiter that does not block its thread (a yielded coroutine): made once per pooled request and queued again
     * for each acquisition it waits for.
     */
    abstract static class Deferred extends Node {
        /** When it asked, on the asking thread's clock; written before it is queued, read after the hand-off. */
        long queuedAt;
        /**
         * The I/O thread it runs on (QEMU's AioContext), written before it asks: a {@link Yielding} contender does
         * not spin for a holder on its own thread, which cannot let go while it spins.
         */
        int context = NO_CONTEXT;
        /** Whether its last acquisition waited in a spin before it took the lock; written by the asking thread. */
        boolean spun;

        /**
         * The lock was handed to this waiter (it stays held for it); runs on the releasing thread, which must not
         * run the waiter's critical section itself: it schedules it on the waiter's thread (QEMU's {@code
         * aio_co_wake}), where {@link #resume} starts it.
         */
        abstract void granted();
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
        acquired(v, waitNanos);
    }

    /**
     * Takes the lock for a caller that must not block its thread while another holds it: a request on its I/O
     * thread, as a coroutine on QEMU's CoMutex. True when the lock is taken now. Otherwise (only a lock that
     * {@link #queues()}) {@code d} is queued and false returned: when the lock is handed to it, {@link
     * Deferred#granted()} runs on the releasing thread, and the waiter's own thread then calls {@link #resume}
     * and goes on holding the lock. A lock that does not queue blocks as {@link #lock()} does.
     */
    final boolean lockOrQueue(Deferred d) {
        if (!queues()) {
            lock();
            return true;
        }
        VirtualWaits v = VirtualWaits.current();
        if (v != null) {
            v.point(); // as in lock(): threads due before this acquisition run first
        }
        d.queuedAt = now(v);
        d.spun = false;
        if (!takeOrQueue(d, v)) {
            if (v != null) {
                v.chargeCoroutineSwitch(); // the coroutine yields (model charging)
            }
            return false;
        }
        acquired(v, d.spun ? Math.max(0, now(v) - d.queuedAt) : -1); // a spin that ended in the lock contended
        return true;
    }

    /** The caller of a {@link #lockOrQueue} that returned false was granted the lock: it holds it from now on. */
    final void resume(Deferred d) {
        VirtualWaits v = VirtualWaits.current();
        if (v != null) {
            v.chargeCoroutineSwitch(); // its thread enters the coroutine again (model charging)
        }
        acquired(v, Math.max(0, now(v) - d.queuedAt));
    }

    /** Takes the lock when it is free, never waiting; true when taken. */
    final boolean tryLock() {
        VirtualWaits v = VirtualWaits.current();
        if (v != null) {
            v.point(); // as in lock()
        }
        if (!tryAcquire()) {
            return false;
        }
        acquired(v, -1);
        return true;
    }

    /** Bookkeeping of an acquisition that waited {@code waitNanos} (-1: it did not wait). The holder's thread. */
    private void acquired(VirtualWaits v, long waitNanos) {
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
            if (shared) {
                // Model charging: the list update's cross-core cache-line transfers, with the lock held (a list that
                // only one I/O thread writes stays in its core's cache).
                v.chargeCriticalSection();
            }
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

    /** Takes the lock if it is free. */
    abstract boolean tryAcquire();

    /** Whether {@link #lockOrQueue} may queue (a waiter that yields) rather than block. */
    boolean queues() {
        return false;
    }

    /**
     * {@link #lockOrQueue}'s step for a lock that {@link #queues()}: takes it when free (true), else queues; {@code v}
     * the thread's virtual-time waits, or null.
     */
    boolean takeOrQueue(Deferred d, VirtualWaits v) {
        throw new UnsupportedOperationException("this lock blocks its waiters");
    }

    abstract void release();

    /** {@link #acquire()} in virtual time: a contended acquirer waits with {@code v}, the wait in virtual time. */
    abstract long acquire(VirtualWaits v);

    /** {@link #release()} in virtual time: wakes the waiters with {@code v}. */
    abstract void release(VirtualWaits v);

    /** QEMU's QemuMutex after seed 004: a plain mutex; contenders spin briefly, then block. */
    static final class Mutex extends TrackedLock {
        private final ReentrantLock lock = new ReentrantLock();

        Mutex(LockCounters stats, boolean shared) {
            super(stats, shared);
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
        boolean tryAcquire() {
            return lock.tryLock();
        }

        @Override
        void release() {
            lock.unlock();
        }

        /**
         * A contended acquirer blocks (a futex wait) until a release wakes it, then tries again; the lock is free
         * from the release on, so a thread due before the woken waiter runs may take it first.
         */
        /** Who is on its way into a futex wait ({@link VirtualWaits#futexWaitNanos()}) waits for this token. */
        private final Object entering = new Object();

        /**
         * A contended acquirer goes into a futex wait: when the lock is released before the wait reaches the kernel's
         * check ({@link VirtualWaits#futexWaitNanos()}, model charging) it returns at once and takes the lock;
         * otherwise it sleeps until a release wakes it, then tries again.
         */
        @Override
        long acquire(VirtualWaits v) {
            if (lock.tryLock()) {
                return -1;
            }
            long start = v.now();
            while (true) {
                long entry = v.futexWaitNanos();
                if (entry > 0) {
                    long until = v.now() + entry;
                    while (lock.isLocked() && v.now() < until) {
                        v.awaitNanos(entering, until - v.now());
                    }
                    if (lock.tryLock()) {
                        break;
                    }
                }
                v.await(this);
                if (lock.tryLock()) {
                    break;
                }
            }
            return v.now() - start;
        }

        @Override
        void release(VirtualWaits v) {
            lock.unlock();
            v.wake(entering, 0); // a futex wait not yet in the kernel sees the word change and returns
            v.wake(this, v.wakeUpNanos()); // the waiters (if any) were blocked: each pays a wake-up, then tries again
        }
    }

    /**
     * QEMU's CoMutex before seed 004: a contender queues itself FIFO and waits; unlock hands ownership straight to
     * the first waiter and wakes it, so the lock stays held, and every later contender queues, until that waiter
     * runs again. A contender of {@link #lockOrQueue} that finds the holder alone, on another I/O thread, first
     * spins for it ({@link #SPIN_ITERATIONS}). A waiter that {@link #lockOrQueue queues} does not block its thread
     * (the coroutine yields and its IOThread serves other requests); the hand-off schedules it on its own thread,
     * and the lock stays held until that thread gets to it. A waiter of {@link #lock()} blocks its thread.
     */
    static final class Yielding extends TrackedLock {

        /** A waiter that blocks its thread. */
        private static final class Waiter extends Node {
            final Thread thread = Thread.currentThread();
            volatile boolean granted;
        }

        /**
         * QEMU's {@code qemu_co_mutex_lock}: a contender that finds the lock held by one holder and nobody queued,
         * the holder on another AioContext, spins up to this many turns of {@code cpu_relax()} for it to be free
         * before it queues (CoMutex's "artificial" FUTEX_WAIT failure for short critical sections).
         */
        static final int SPIN_ITERATIONS = 1000;

        /** Guards the writes of {@link #held}, {@link #holder} and the waiter queue; held for a few instructions. */
        private final ReentrantLock guard = new ReentrantLock();
        /** Read by spinners outside the guard. */
        private volatile boolean held;
        /** The holder's I/O thread ({@code mutex->ctx}), {@link #NO_CONTEXT} when unknown; read by spinners. */
        private volatile int holder = NO_CONTEXT;
        private Node head;
        private Node tail;
        /** Whether a contender of this lock queued without spinning once under model charging; under the guard. */
        private boolean convoyStarted;
        /** Who spins in virtual time waits for this token; every release wakes them to look again. */
        private final Object spinners = new Object();

        Yielding(LockCounters stats, boolean shared) {
            super(stats, shared);
        }

        @Override
        boolean queues() {
            return true;
        }

        @Override
        long acquire() {
            Waiter me = takeOrQueueBlocking();
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

        @Override
        boolean tryAcquire() {
            guard.lock();
            try {
                if (held) {
                    return false;
                }
                held = true;
                holder = NO_CONTEXT;
                return true;
            } finally {
                guard.unlock();
            }
        }

        /** Takes the lock when free (returns null), else queues the caller, which blocks, and returns its place. */
        private Waiter takeOrQueueBlocking() {
            guard.lock();
            try {
                if (!held) {
                    held = true;
                    holder = NO_CONTEXT;
                    return null;
                }
                Waiter me = new Waiter();
                link(me);
                return me;
            } finally {
                guard.unlock();
            }
        }

        /**
         * As {@code qemu_co_mutex_lock}: takes the lock when free; queues at once when others queue already;
         * otherwise (the holder alone, on another context) spins until the lock is seen free, then tries again,
         * and queues when the spin runs out or the lock passes to a holder on {@code d}'s own context. The turns
         * count over the retries, as QEMU's {@code i}; in virtual time the spin waits for a release, as long as
         * {@link #SPIN_ITERATIONS} turns take.
         */
        @Override
        boolean takeOrQueue(Deferred d, VirtualWaits v) {
            int turns = 0;
            long spinEnd = v == null ? 0 : v.now() + v.spinNanos(SPIN_ITERATIONS);
            while (true) {
                guard.lock();
                try {
                    if (!held) {
                        held = true;
                        holder = d.context;
                        return true;
                    }
                    if (head != null || holder == d.context || (v == null ? turns >= SPIN_ITERATIONS
                            : v.now() >= spinEnd)) {
                        link(d);
                        return false;
                    }
                    if (v != null && !convoyStarted && v.modelCharging()) {
                        // Model charging: the run's first contender queues as one whose spin ran out (a holder the
                        // host delayed past the spin); the model has no such delay of its own (docs/seeds.md, 004).
                        convoyStarted = true;
                        link(d);
                        return false;
                    }
                } finally {
                    guard.unlock();
                }
                d.spun = true;
                if (v == null) {
                    while (++turns < SPIN_ITERATIONS && held && holder != d.context) {
                        Thread.onSpinWait();
                    }
                } else {
                    while (held && holder != d.context && v.now() < spinEnd) {
                        v.awaitNanos(spinners, spinEnd - v.now());
                    }
                }
            }
        }

        /** Appends {@code n} to the queue; under the guard. */
        private void link(Node n) {
            n.next = null;
            if (tail == null) {
                head = n;
            } else {
                tail.next = n;
            }
            tail = n;
        }

        @Override
        void release() {
            handOver(handOff(), null);
        }

        /**
         * Lets the waiter handed the lock ({@code next}, if any) go on: a blocked one is woken (in virtual time after
         * a thread's wake-up, with {@code v}), a queued one ({@link Deferred}) is scheduled on its own thread.
         */
        private static void handOver(Node next, VirtualWaits v) {
            if (next instanceof Waiter w) {
                if (v != null) {
                    v.wake(w, v.wakeUpNanos());
                }
                LockSupport.unpark(w.thread); // in virtual time for a waiter outside it (none while it runs)
            } else if (next != null) {
                ((Deferred) next).granted();
            }
        }

        /** Frees the lock, or hands it to the first waiter (returned): the lock then stays held, by the waiter. */
        private Node handOff() {
            guard.lock();
            try {
                Node next = head;
                holder = next instanceof Deferred d ? d.context : NO_CONTEXT; // QEMU's qemu_co_mutex_wake
                if (next == null) {
                    held = false;
                } else {
                    head = next.next;
                    if (head == null) {
                        tail = null;
                    }
                    next.next = null; // a pooled waiter is queued again later
                    if (next instanceof Waiter w) {
                        w.granted = true; // hand-off: the lock stays held, now by the waiter
                    }
                }
                return next;
            } finally {
                guard.unlock();
            }
        }

        /**
         * The contended acquirer queues and blocks until the lock is handed to it; it holds the lock from the
         * hand-off on, and runs only after its wake-up.
         */
        @Override
        long acquire(VirtualWaits v) {
            Waiter me = takeOrQueueBlocking();
            if (me == null) {
                return -1;
            }
            long start = v.now();
            while (!me.granted) {
                v.await(me);
            }
            return v.now() - start;
        }

        /**
         * Hands the lock to the first waiter and wakes it: the lock stays held for the waiter's wake-up too. A
         * blocked waiter pays a thread's wake-up; a queued one ({@link Deferred}) runs when its thread gets to the
         * hand-off, which {@link Deferred#granted()} posts there.
         */
        @Override
        void release(VirtualWaits v) {
            Node next = handOff();
            if (next instanceof Deferred) {
                v.chargeCoroutineSchedule(); // model charging: aio_co_schedule, the lock handed over meanwhile
            }
            handOver(next, v);
            v.wake(spinners, 0); // a spinner sees the lock free, or passed to a holder on its own context, at once
        }

        /** Waiters queued now, for tests. */
        int queued() {
            guard.lock();
            try {
                int n = 0;
                for (Node w = head; w != null; w = w.next) {
                    n++;
                }
                return n;
            } finally {
                guard.unlock();
            }
        }
    }
}
