package io.kickplug.blk.tracked;

import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.lockstat.LockCounters;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A disk's list of in-flight requests (QEMU's {@code BlockDriverState.tracked_requests}, seed 004), used
 * to order requests without ever blocking the thread that submits them:
 * <ul>
 * <li>a FLUSH waits until every write accepted before it has completed;</li>
 * <li>a serialising request (WRITE_ZEROES, DISCARD, SECURE_ERASE) and any request overlapping it wait for
 * each other, the later one for the earlier one (QEMU's {@code bdrv_wait_serialising_requests}).</li>
 * </ul>
 * A request that must wait is deferred: {@link #begin} registers it and {@link Request#arm()} says whether
 * it may start now; otherwise its continuation runs on the thread that completes its last dependency.
 *
 * <p>The list's lock is selectable ({@link TrackedLockKind}) and can be switched at run time: a switch
 * starts a new <em>generation</em> (lists plus lock); requests finish under the generation they started
 * in, and newer requests also consult older generations until these are empty.
 *
 * <p>Ordering argument: each request takes its sequence number from one disk-wide counter while it holds
 * the lock of the list it inserts itself into, and scans other lists only afterwards. So of two
 * conflicting requests, the one with the larger number always finds the other one (or finds it already
 * gone), and only waits for smaller numbers, so there is no cycle. Reads and writes skip the scan while no
 * serialising request is in flight, like QEMU's {@code serialising_in_flight}: a serialising request
 * counts itself before taking its number, so such a read or write either sees the count or is found by
 * the serialising request's own scan.
 *
 * <p>Waiting for the lock: a request of {@link #newRequest(Runnable, Executor, Runnable, Runnable)} registers with
 * {@link #beginOrDefer} and ends with {@link Request#endOrDefer()}, which never block its I/O thread on the
 * yielding lock: like a coroutine on QEMU's CoMutex the request waits in the lock's queue and goes on, on its I/O
 * thread, once the lock is handed to it. So nothing an I/O thread does may block on a yielding lock (its own
 * queued request may hold it, waiting for that very thread): scans take other lists' locks the same way, and a
 * retired generation is dropped only by whoever finds all its locks free ({@link Generation#pruneIfEmpty}), which
 * every holder of one of its locks tries after it lets go.
 */
public final class TrackedRequests {

    /** What a request does to the disk, as far as ordering is concerned. */
    public enum Access {
        READ,
        WRITE,
        /** WRITE_ZEROES, DISCARD, SECURE_ERASE: overlapping requests wait for each other. */
        SERIALISING,
        FLUSH
    }

    private static final Shard[] NO_SHARDS = new Shard[0];

    private final int shardCount;
    private final AtomicLong sequence = new AtomicLong();
    private final AtomicInteger serialisingInFlight = new AtomicInteger();
    private final Map<TrackedLockKind, LockCounters> stats = new EnumMap<>(TrackedLockKind.class);
    /** Every generation that may hold requests, oldest first; the current one is last. */
    private final List<Generation> live = new CopyOnWriteArrayList<>();
    private volatile Generation current;

    /**
     * @param kind the lock to start with
     * @param ioThreads the number of I/O threads (the shards of {@link TrackedLockKind#SHARDED})
     */
    public TrackedRequests(TrackedLockKind kind, int ioThreads) {
        if (ioThreads < 1) {
            throw new IllegalArgumentException("at least one I/O thread is needed, not " + ioThreads);
        }
        this.shardCount = ioThreads;
        for (TrackedLockKind k : TrackedLockKind.values()) {
            stats.put(k, new LockCounters());
        }
        current = new Generation(Objects.requireNonNull(kind, "kind"));
        live.add(current);
    }

    /** The lock new requests register under. */
    public TrackedLockKind kind() {
        return current.kind;
    }

    /**
     * Makes new requests register under a {@code kind} lock; requests in flight finish under theirs.
     * Switching to the kind in use does nothing.
     */
    public synchronized void switchTo(TrackedLockKind kind) {
        Generation old = current;
        if (old.kind == Objects.requireNonNull(kind, "kind")) {
            return;
        }
        Generation next = new Generation(kind);
        live.add(next); // visible to scans before anyone registers in it
        current = next;
        old.retired = true;
        old.pruneIfEmpty();
    }

    /** Statistics of all locks of {@code kind} this disk has used (for sharded: all shards together). */
    public LockCounters stats(TrackedLockKind kind) {
        return stats.get(kind);
    }

    /** Generations still consulted; 1 unless a switch happened while requests were in flight. */
    public int generations() {
        return live.size();
    }

    /** Requests registered and not ended. Not on an I/O thread: it may block on a yielding lock. */
    public int size() {
        int n = 0;
        for (Generation g : live) {
            for (Shard s : g.shards) {
                s.lock.lock();
                try {
                    n += s.size;
                } finally {
                    s.lock.unlock();
                }
            }
            g.pruneIfRetired(); // a holder's prune may have found this lock taken by us
        }
        return n;
    }

    /**
     * Registers a request and finds the earlier ones it must wait for. The caller then calls
     * {@link Request#arm()}: when it returns true the request may start at once, otherwise
     * {@code onReady} runs (once) on the thread that ends its last dependency.
     *
     * @param first first sector (unused for FLUSH)
     * @param end sector after the last one (unused for FLUSH)
     * @param ioThread index of the I/O thread that submits it (its shard under the sharded lock)
     */
    public Request begin(Access access, long first, long end, int ioThread, Runnable onReady) {
        return begin(new Request(Objects.requireNonNull(onReady, "onReady"), null, null, null), access, first, end,
                ioThread);
    }

    /**
     * A request object for a pool: {@link #begin(Request, Access, long, long, int)} registers it again for each
     * request it carries, so a queue allocates nothing per request.
     *
     * @param onReady the continuation of every request it will carry
     */
    public Request newRequest(Runnable onReady) {
        return new Request(Objects.requireNonNull(onReady, "onReady"), null, null, null);
    }

    /**
     * A request object for a pool whose requests register with {@link #beginOrDefer} and end with
     * {@link Request#endOrDefer()}, so that they never block their I/O thread on the yielding lock.
     *
     * @param onReady the continuation of every request it will carry, once its dependencies ended
     * @param resumeOn the I/O thread that goes on with a request once it was handed the lock it waited for
     * @param onBegun run on {@code resumeOn} when a {@link #beginOrDefer} that returned false has registered
     * @param onEnded run on {@code resumeOn} when an {@link Request#endOrDefer()} that returned false has ended
     */
    public Request newRequest(Runnable onReady, Executor resumeOn, Runnable onBegun, Runnable onEnded) {
        return new Request(Objects.requireNonNull(onReady, "onReady"), Objects.requireNonNull(resumeOn, "resumeOn"),
                Objects.requireNonNull(onBegun, "onBegun"), Objects.requireNonNull(onEnded, "onEnded"));
    }

    /**
     * As {@link #begin(Request, Access, long, long, int)}, for a request of
     * {@link #newRequest(Runnable, Executor, Runnable, Runnable)} on its I/O thread: true when it is registered now
     * (then call {@link Request#arm()}); false when it waits for the lock, and its {@code onBegun} runs on its I/O
     * thread once it is registered. Never blocks on the yielding lock.
     *
     * @throws IllegalStateException when {@code r} is still registered, or was not made to defer
     */
    public boolean beginOrDefer(Request r, Access access, long first, long end, int ioThread) {
        if (r.resumeOn == null) {
            throw new IllegalStateException("tracked request made without an I/O thread to resume on");
        }
        r.reuse(access, first, end);
        if (access == Access.SERIALISING) {
            serialisingInFlight.incrementAndGet(); // before the sequence number: see the class comment
        }
        r.ioThread = ioThread;
        r.mayQueue = true;
        return r.lockOwn();
    }

    /** The list a request of {@code ioThread} registers in, under {@code g}. */
    private static Shard shardOf(Generation g, int ioThread) {
        return g.shards[g.shards.length == 1 ? 0 : Math.floorMod(ioThread, g.shards.length)];
    }

    /**
     * As {@link #begin(Access, long, long, int, Runnable)}, with a request object of {@link #newRequest}. It blocks
     * while another holds the lock: not on an I/O thread when the lock is yielding (use {@link #beginOrDefer}).
     *
     * @throws IllegalStateException when {@code r} is still registered (its last request has not ended)
     */
    public Request begin(Request r, Access access, long first, long end, int ioThread) {
        r.reuse(access, first, end);
        if (access == Access.SERIALISING) {
            serialisingInFlight.incrementAndGet(); // before the sequence number: see the class comment
        }
        r.ioThread = ioThread;
        r.mayQueue = false;
        r.lockOwn(); // blocks instead of queueing: always true
        return r;
    }

    /** Whether {@code newer} must wait for {@code older}. */
    static boolean conflicts(Request older, Request newer) {
        if (newer.access == Access.FLUSH) {
            return older.access == Access.WRITE || older.access == Access.SERIALISING;
        }
        if (older.access == Access.FLUSH) {
            return false;
        }
        if (older.access != Access.SERIALISING && newer.access != Access.SERIALISING) {
            return false;
        }
        return older.first < newer.end && newer.first < older.end;
    }

    /** One tracked request. */
    public final class Request {
        /** Which step a request that waits for a lock takes once the lock is handed to it. */
        private static final int REGISTER = 1;
        private static final int SCAN = 2;
        private static final int END = 3;

        Access access;
        long first;
        long end;
        private final Runnable onReady;
        /** Null for a request that only blocks ({@link #newRequest(Runnable)}). */
        private final Executor resumeOn;
        private final Runnable onBegun;
        private final Runnable onEnded;
        /** Its place in a yielding lock's queue; the hand-off schedules {@link #resumeTask} on {@link #resumeOn}. */
        private final TrackedLock.Deferred lockWait = new TrackedLock.Deferred() {
            @Override
            void granted() {
                resumeOn.execute(resumeTask);
            }
        };
        private final Runnable resumeTask = this::lockHandedOver;
        // The lock step in progress; written before the request queues, read on its I/O thread after the hand-off.
        private int step;
        private Shard waitingOn;
        /**
         * A FLUSH or serialising request's scan: the generations left (an iterator over {@link #live}'s snapshot),
         * the lists of the current one and the next of them.
         */
        private Iterator<Generation> scanGenerations;
        private Shard[] scanShards = NO_SHARDS;
        private int scanAt;
        private int ioThread;
        /** Whether the current call waits for a lock in its queue (false: blocks); set by the call. */
        private boolean mayQueue;
        /** Dependencies not yet ended, plus one until {@link #arm()}. */
        private final AtomicInteger pending = new AtomicInteger(1);
        /** Set under the lock of {@link #shard} before insertion. */
        long seq;
        private Shard shard;
        // Guarded by shard.lock.
        private Request prev;
        private Request next;
        private List<Request> waiters;
        private boolean ended;
        /**
         * Whether {@link #begin} made this request wait for an earlier one; written and read by the thread that
         * begins and arms it. Without a dependency nobody else ever touches {@link #pending}.
         */
        private boolean dependent;

        private Request(Runnable onReady, Executor resumeOn, Runnable onBegun, Runnable onEnded) {
            this.onReady = onReady;
            this.resumeOn = resumeOn;
            this.onBegun = onBegun;
            this.onEnded = onEnded;
        }

        /** Takes its list's lock and registers; false when it waits for the lock (then it goes on later). */
        private boolean lockOwn() {
            while (true) {
                Shard own = shardOf(current, ioThread);
                if (!take(own, REGISTER)) {
                    return false;
                }
                if (!own.pruned) {
                    return register(own);
                }
                own.lock.unlock(); // a retired generation was pruned under us: take the current one
            }
        }

        /** Under {@code own}'s lock, which it releases: numbers and inserts the request; then the scans. */
        private boolean register(Shard own) {
            boolean scanAll;
            try {
                seq = sequence.incrementAndGet();
                own.insert(this);
                scanAll = access == Access.FLUSH || access == Access.SERIALISING || serialisingInFlight.get() > 0;
                if (scanAll) {
                    own.collectDependencies(this);
                }
            } finally {
                own.lock.unlock();
            }
            if (!scanAll) {
                return true;
            }
            scanGenerations = live.iterator();
            scanShards = NO_SHARDS;
            scanAt = 0;
            return scanRest();
        }

        /**
         * Scans the lists left but its own ({@link #shard}), each under its lock; false when it waits for one (then
         * it goes on later).
         */
        private boolean scanRest() {
            while (true) {
                while (scanAt < scanShards.length) {
                    Shard s = scanShards[scanAt];
                    if (s != shard) {
                        if (!take(s, SCAN)) {
                            return false;
                        }
                        scanLocked(s);
                    }
                    scanAt++;
                }
                if (!scanGenerations.hasNext()) {
                    scanGenerations = null;
                    scanShards = NO_SHARDS;
                    return true;
                }
                scanShards = scanGenerations.next().shards;
                scanAt = 0;
            }
        }

        /** Under {@code s}'s lock, which it releases. */
        private void scanLocked(Shard s) {
            try {
                s.collectDependencies(this);
            } finally {
                s.lock.unlock();
            }
            s.generation.pruneIfRetired();
        }

        /**
         * Takes {@code s}'s lock (true); or, when this call may queue and the lock is held, queues for it and
         * returns false: {@code nextStep} then runs on the I/O thread once the lock is handed over.
         */
        private boolean take(Shard s, int nextStep) {
            if (!mayQueue) {
                s.lock.lock();
                return true;
            }
            // Before it queues: the hand-off may come, and its continuation read these, before lockOrQueue returns.
            step = nextStep;
            waitingOn = s;
            lockWait.context = ioThread;
            if (s.lock.lockOrQueue(lockWait)) {
                waitingOn = null;
                return true;
            }
            return false;
        }

        /** On its I/O thread: the lock it waited for is its own now; the step it waited for, then the next ones. */
        private void lockHandedOver() {
            Shard s = waitingOn;
            waitingOn = null;
            s.lock.resume(lockWait);
            switch (step) {
                case REGISTER -> {
                    boolean done;
                    if (s.pruned) {
                        s.lock.unlock();
                        done = lockOwn();
                    } else {
                        done = register(s);
                    }
                    if (done) {
                        onBegun.run();
                    }
                }
                case SCAN -> {
                    scanAt++;
                    scanLocked(s);
                    if (scanRest()) {
                        onBegun.run();
                    }
                }
                default -> {
                    endLocked(s);
                    onEnded.run();
                }
            }
        }

        /**
         * Readies the object for its next request. Only after {@link #end()}: a pooled object is never reused
         * while the request it carries is registered. {@code ended} was written under the shard lock by the
         * thread that ended it; the owner reuses it after a hand-off that orders that write first.
         */
        private void reuse(Access access, long first, long end) {
            if (shard != null && !ended) {
                throw new IllegalStateException("tracked request " + seq + " reused before it ended");
            }
            this.access = access;
            this.first = first;
            this.end = end;
            this.seq = 0;
            this.shard = null;
            this.prev = null;
            this.next = null;
            this.waiters = null;
            this.scanGenerations = null;
            this.scanShards = NO_SHARDS;
            this.waitingOn = null;
            this.ended = false;
            this.dependent = false;
            // A plain (release) store: the only other threads that update it do so after finding this request in
            // a list, which it enters under a shard lock taken after this store.
            pending.lazySet(1);
        }

        public Access access() {
            return access;
        }

        /** The disk-wide order in which requests were accepted. */
        public long sequence() {
            return seq;
        }

        /** The lock this request registered under. */
        public TrackedLockKind lockKind() {
            return shard.generation.kind;
        }

        /**
         * Call once after {@link #begin}: true when no dependency is left, so the caller starts the request
         * itself; false when the continuation will run when the last dependency ends.
         */
        public boolean arm() {
            if (!dependent) {
                return true; // it waits for nothing: no other thread decrements its count (no atomic per request)
            }
            return pending.decrementAndGet() == 0;
        }

        /**
         * Removes the request from the list and runs the continuations of requests that waited only for
         * it (outside the lock: seed 004 patch 1). Call once, after the backend work is done.
         */
        public void end() {
            Shard s = shard;
            mayQueue = false;
            take(s, END);
            endLocked(s);
        }

        /**
         * As {@link #end()}, for a request of {@link #newRequest(Runnable, Executor, Runnable, Runnable)}, from any
         * thread: true when it has ended; false when it waits for the lock, and its {@code onEnded} runs on its I/O
         * thread once it has ended. Never blocks on the yielding lock.
         */
        public boolean endOrDefer() {
            if (resumeOn == null) {
                throw new IllegalStateException("tracked request made without an I/O thread to resume on");
            }
            Shard s = shard;
            mayQueue = true;
            if (!take(s, END)) {
                return false;
            }
            endLocked(s);
            return true;
        }

        /** Under {@code s}'s lock, which it releases: the rest of {@link #end()}. */
        private void endLocked(Shard s) {
            List<Request> woken;
            boolean empty;
            try {
                if (ended) {
                    throw new IllegalStateException("tracked request " + seq + " ended twice");
                }
                ended = true;
                s.remove(this);
                empty = s.size == 0;
                woken = waiters;
                waiters = null;
            } finally {
                s.lock.unlock();
            }
            if (access == Access.SERIALISING) {
                serialisingInFlight.decrementAndGet();
            }
            // No one can add itself to `waiters` any more: requests only wait for what they find listed.
            if (woken != null) {
                for (Request w : woken) {
                    if (w.pending.decrementAndGet() == 0) {
                        w.onReady.run();
                    }
                }
            }
            if (empty) {
                s.generation.pruneIfRetired();
            }
        }
    }

    /** The lists and lock(s) of one lock kind, from a switch to the next. */
    private final class Generation {
        final TrackedLockKind kind;
        final Shard[] shards;
        volatile boolean retired;

        Generation(TrackedLockKind kind) {
            this.kind = kind;
            LockCounters lockStats = stats.get(kind);
            int n = kind == TrackedLockKind.SHARDED ? shardCount : 1;
            shards = new Shard[n];
            for (int i = 0; i < n; i++) {
                shards[i] = new Shard(this, TrackedLock.create(kind, lockStats, n == 1 && shardCount > 1));
            }
        }

        /** {@link #pruneIfEmpty()} when this generation is retired. */
        void pruneIfRetired() {
            if (retired) {
                pruneIfEmpty();
            }
        }

        /**
         * Drops a retired generation from the scans once all its lists are empty. A yielding lock is only tried:
         * its holder may be a request waiting for this very thread, and whoever holds it tries again after it lets
         * go (the class comment); a mutex is waited for.
         */
        void pruneIfEmpty() {
            int locked = 0;
            try {
                for (Shard s : shards) { // always in index order: no lock-order cycle between pruners
                    if (s.lock.queues()) {
                        if (!s.lock.tryLock()) {
                            return;
                        }
                    } else {
                        s.lock.lock();
                    }
                    locked++;
                    if (s.size != 0 || s.pruned) {
                        return;
                    }
                }
                for (Shard s : shards) {
                    s.pruned = true;
                }
                live.remove(this);
            } finally {
                for (int i = 0; i < locked; i++) {
                    shards[i].lock.unlock();
                }
            }
        }
    }

    /** One list with its lock: the whole disk's for mutex and yielding, one I/O thread's for sharded. */
    private static final class Shard {
        final Generation generation;
        final TrackedLock lock;
        // Guarded by lock.
        Request head;
        int size;
        boolean pruned;

        Shard(Generation generation, TrackedLock lock) {
            this.generation = generation;
            this.lock = lock;
        }

        void insert(Request r) {
            r.shard = this;
            r.next = head;
            if (head != null) {
                head.prev = r;
            }
            head = r;
            size++;
        }

        void remove(Request r) {
            if (r.prev != null) {
                r.prev.next = r.next;
            } else {
                head = r.next;
            }
            if (r.next != null) {
                r.next.prev = r.prev;
            }
            r.prev = null;
            r.next = null;
            size--;
        }

        /** Makes {@code r} wait for the earlier requests of this list it conflicts with. */
        void collectDependencies(Request r) {
            for (Request x = head; x != null; x = x.next) {
                if (x.seq < r.seq && conflicts(x, r)) {
                    if (x.waiters == null) {
                        x.waiters = new ArrayList<>(2);
                    }
                    x.waiters.add(r);
                    r.pending.incrementAndGet();
                    r.dependent = true;
                }
            }
        }
    }
}
