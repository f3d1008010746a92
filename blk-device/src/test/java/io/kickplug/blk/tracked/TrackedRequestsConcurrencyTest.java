package io.kickplug.blk.tracked;

import io.kickplug.api.lockstat.LockCounters;
import io.kickplug.api.lockstat.LockStatRow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.blk.tracked.TrackedRequests.Access;
import io.kickplug.blk.tracked.TrackedRequests.Request;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Several submitting threads (one per "I/O thread" shard) and a pool that "executes" requests race on one
 * tracked list; a checker verifies at each start that every earlier conflicting request has ended, and
 * that every request starts and ends exactly once.
 */
class TrackedRequestsConcurrencyTest {

    private static final int SUBMITTERS = 4;
    private static final int PER_SUBMITTER = 3_000;
    /** Requests in flight per submitter, like a queue's iodepth. */
    private static final int DEPTH = 16;

    /** One request of the run, with what the checker needs. */
    private static final class Op {
        final Access access;
        final long first;
        final long end;
        final AtomicInteger starts = new AtomicInteger();
        volatile boolean ended;
        Request request;
        final CountDownLatch registered = new CountDownLatch(1);

        Op(Access access, long first, long end) {
            this.access = access;
            this.first = first;
            this.end = end;
        }
    }

    private final List<String> violations = new ArrayList<>();
    private final ConcurrentLinkedQueue<Op> all = new ConcurrentLinkedQueue<>();
    /** Ops not ended yet. */
    private final Set<Op> live = ConcurrentHashMap.newKeySet();

    /** How requests wait for a lock. */
    private enum Waits {
        /** {@code begin} and {@code end}: they block. */
        BLOCKING,
        /**
         * {@code beginOrDefer} and {@code endOrDefer}: they queue on the yielding lock and go on on their
         * submitter's own single-thread "I/O thread".
         */
        QUEUED,
        /**
         * As {@link #QUEUED}, but the continuation runs at once on the thread that hands the lock over: the hand-off
         * then comes as early as it can, racing the request that is still queueing.
         */
        QUEUED_INLINE
    }

    private void run(TrackedLockKind kind, boolean switching, Waits waits, long seed) throws Exception {
        boolean deferring = waits != Waits.BLOCKING;
        TrackedRequests tracked = new TrackedRequests(kind, SUBMITTERS);
        ExecutorService executors = Executors.newFixedThreadPool(3);
        ExecutorService submitters = Executors.newFixedThreadPool(SUBMITTERS);
        List<ExecutorService> ioThreads = new ArrayList<>();
        for (int s = 0; s < SUBMITTERS; s++) {
            ioThreads.add(Executors.newSingleThreadExecutor());
        }
        AtomicInteger done = new AtomicInteger();
        AtomicInteger submitted = new AtomicInteger();
        TrackedLockKind[] kinds = TrackedLockKind.values();
        // Requests registered under each lock kind (Request.lockKind: the generation they joined).
        AtomicInteger[] underKind = new AtomicInteger[kinds.length];
        Arrays.setAll(underKind, k -> new AtomicInteger());
        AtomicInteger switches = new AtomicInteger();
        CompletableFuture<Void> switcherDone = new CompletableFuture<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Thread switcher = new Thread(() -> {
            // Twice through the other kinds and back, each switch followed by requests registering under
            // the new kind before the next one; the submitters keep going until this is done.
            try {
                for (int round = 1; round <= 2 * kinds.length; round++) {
                    TrackedLockKind next = kinds[(kind.ordinal() + round) % kinds.length];
                    int before = underKind[next.ordinal()].get();
                    tracked.switchTo(next);
                    while (underKind[next.ordinal()].get() == before) {
                        if (System.nanoTime() - deadline > 0) {
                            throw new AssertionError("no request registered under " + next + " after the switch");
                        }
                        Thread.yield();
                    }
                    switches.incrementAndGet();
                }
                switcherDone.complete(null);
            } catch (Throwable e) {
                switcherDone.completeExceptionally(e);
            }
        }, "tracked-switcher");
        try {
            if (switching) {
                switcher.start();
            } else {
                switcherDone.complete(null);
            }
            List<Future<?>> futures = new ArrayList<>();
            for (int s = 0; s < SUBMITTERS; s++) {
                int shard = s;
                Random random = new Random(seed + s);
                Semaphore depth = new Semaphore(DEPTH);
                futures.add(submitters.submit(() -> {
                    for (int i = 0; i < PER_SUBMITTER
                            || !switcherDone.isDone() && System.nanoTime() - deadline < 0; i++) {
                        // Interruptible, so that the pool's shutdownNow ends a run that lost a request.
                        if (!depth.tryAcquire(60, TimeUnit.SECONDS)) {
                            throw new AssertionError("no request of submitter " + shard + " ended in 60 s");
                        }
                        submitted.incrementAndGet();
                        Access access = pick(random);
                        long first = random.nextInt(64);
                        Op op = new Op(access, first, first + 1 + random.nextInt(8));
                        all.add(op);
                        live.add(op);
                        Runnable finished = () -> {
                            depth.release();
                            done.incrementAndGet();
                        };
                        Runnable start = () -> executors.execute(() -> {
                            awaitRegistered(op);
                            check(op);
                            if (ThreadLocalRandom.current().nextBoolean()) {
                                Thread.yield();
                            }
                            op.ended = true;
                            live.remove(op);
                            if (!deferring) {
                                op.request.end();
                                finished.run();
                            } else if (op.request.endOrDefer()) {
                                finished.run();
                            }
                        });
                        Runnable begun = () -> {
                            underKind[op.request.lockKind().ordinal()].incrementAndGet();
                            op.registered.countDown();
                            if (op.request.arm()) {
                                start.run();
                            }
                        };
                        if (!deferring) {
                            op.request = tracked.begin(access, op.first, op.end, shard, start);
                            begun.run();
                        } else {
                            op.request = tracked.newRequest(start,
                                    waits == Waits.QUEUED ? ioThreads.get(shard) : Runnable::run, begun, finished);
                            if (tracked.beginOrDefer(op.request, access, op.first, op.end, shard)) {
                                begun.run();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
            long drained = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (done.get() < submitted.get()) {
                assertTrue(System.nanoTime() - drained < 0, "requests still waiting: "
                        + (submitted.get() - done.get()));
                Thread.yield();
            }
            if (switching) {
                switcher.join(10_000);
            }
        } finally {
            submitters.shutdownNow();
            executors.shutdownNow();
            ioThreads.forEach(ExecutorService::shutdownNow);
        }
        synchronized (violations) {
            assertEquals(List.of(), violations.subList(0, Math.min(5, violations.size())));
        }
        switcherDone.get(1, TimeUnit.SECONDS); // rethrows what the switcher met
        assertTrue(done.get() >= SUBMITTERS * PER_SUBMITTER);
        assertEquals(submitted.get(), done.get());
        assertEquals(submitted.get(), all.size());
        for (TrackedLockKind k : kinds) {
            int n = underKind[k.ordinal()].get();
            if (switching) {
                assertTrue(n > 0, "requests registered under " + k + ": " + n);
            } else {
                assertEquals(k == kind ? submitted.get() : 0, n, "requests under " + k + " without switching");
            }
        }
        assertEquals(switching ? 2 * kinds.length : 0, switches.get(), "switches that took effect");
        assertEquals(kind, tracked.kind(), "twice round the kinds ends where it began");
        for (Op op : all) {
            assertEquals(1, op.starts.get(), "each request starts exactly once");
        }
        assertEquals(0, tracked.size());
        assertEquals(1, tracked.generations(), "retired generations are dropped once empty");
    }

    private static Access pick(Random random) {
        int r = random.nextInt(20);
        return r < 8 ? Access.READ : r < 16 ? Access.WRITE : r < 19 ? Access.SERIALISING : Access.FLUSH;
    }

    private static void awaitRegistered(Op op) {
        try {
            op.registered.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** At a start: every earlier request this one conflicts with has ended. */
    private void check(Op op) {
        op.starts.incrementAndGet();
        long seq = op.request.sequence();
        for (Op other : live) {
            if (other == op || other.request == null || other.registered.getCount() != 0) {
                continue;
            }
            if (other.request.sequence() < seq && TrackedRequests.conflicts(other.request, op.request) && !other.ended) {
                synchronized (violations) {
                    violations.add(op.access + " " + seq + " started before " + other.access + " "
                            + other.request.sequence() + " ended");
                }
            }
        }
    }

    /**
     * Every lock keeps the order, whether requests block for it or wait in the yielding lock's queue instead of
     * blocking.
     */
    @ParameterizedTest
    @MethodSource("locksAndWaits")
    void eachLockKeepsTheOrderUnderConcurrency(TrackedLockKind kind, Waits waits) throws Exception {
        run(kind, false, waits, 42);
    }

    static Stream<Arguments> locksAndWaits() {
        return Stream.of(Waits.BLOCKING, Waits.QUEUED)
                .flatMap(waits -> Arrays.stream(TrackedLockKind.values()).map(kind -> Arguments.of(kind, waits)));
    }

    @RepeatedTest(3)
    void switchingLocksWhileRequestsRunLosesNothing() throws Exception {
        run(TrackedLockKind.MUTEX, true, Waits.BLOCKING, System.nanoTime());
    }

    /**
     * The hand-off may reach a request before its {@code lockOrQueue} has returned: what the request's continuation
     * reads must be in place before it queues. Continuations run inline at the hand-off make that window as wide as
     * it gets.
     */
    @RepeatedTest(3)
    void aHandOffThatComesBeforeTheQueueingCallReturnsFindsTheRequestReady() throws Exception {
        run(TrackedLockKind.YIELDING, false, Waits.QUEUED_INLINE, System.nanoTime());
    }

    /**
     * Switching away from the yielding lock while requests wait in its queue: nothing is lost, nobody blocks for
     * ever on a lock held for a request that waits for the blocked thread, and the retired generations are dropped.
     */
    @RepeatedTest(3)
    void switchingFromTheYieldingLockWhileRequestsWaitInItsQueueLosesNothing() throws Exception {
        run(TrackedLockKind.YIELDING, true, Waits.QUEUED, System.nanoTime());
    }

    @Test
    void mutualExclusionOfEachLock() throws Exception {
        for (TrackedLockKind kind : TrackedLockKind.values()) {
            LockCounters stats = new LockCounters();
            TrackedLock lock = TrackedLock.create(kind, stats, false);
            int[] counter = {0};
            int threads = 4;
            int rounds = 20_000;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < rounds; i++) {
                        lock.lock();
                        try {
                            counter[0]++; // not atomic: only mutual exclusion keeps it right
                        } finally {
                            lock.unlock();
                        }
                    }
                }));
            }
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertEquals(threads * rounds, counter[0], kind.label());
            LockStatRow s = stats.row("");
            assertEquals(threads * rounds, s.acquisitions(), kind.label());
            assertTrue(s.contentions() <= s.acquisitions());
            assertTrue(s.waittimeTotalNs() >= 0 && s.holdtimeMaxNs() >= 0);
        }
    }
}
