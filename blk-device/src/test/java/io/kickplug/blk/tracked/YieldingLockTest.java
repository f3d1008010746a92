package io.kickplug.blk.tracked;

import io.kickplug.api.lockstat.LockCounters;
import io.kickplug.api.lockstat.LockStatRow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.iothread.VirtualWaits;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The yielding lock queues contenders FIFO and hands ownership to the first on unlock (like CoMutex). */
class YieldingLockTest {

    /** The lock statistics of {@link #lock}. */
    private final LockCounters stats = new LockCounters();
    /** A fresh yielding lock per test. */
    private final TrackedLock.Yielding lock = new TrackedLock.Yielding(stats, false);

    private void awaitQueued(int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (lock.queued() < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("fewer than " + n + " waiters queued in 10 s");
            }
            Thread.onSpinWait();
        }
    }

    @Test
    void waitersGetTheLockInArrivalOrder() throws Exception {
        List<String> order = new CopyOnWriteArrayList<>();
        lock.lock();
        Thread[] threads = new Thread[3];
        for (int i = 0; i < threads.length; i++) {
            String name = "w" + i;
            threads[i] = new Thread(() -> {
                lock.lock();
                order.add(name);
                lock.unlock();
            });
            threads[i].start();
            awaitQueued(i + 1); // arrival order is the start order
        }
        lock.unlock();
        for (Thread t : threads) {
            t.join(10_000);
        }
        assertEquals(List.of("w0", "w1", "w2"), order);
        LockStatRow s = stats.row("");
        assertEquals(4, s.acquisitions());
        assertEquals(3, s.contentions());
        assertTrue(s.waittimeTotalNs() > 0);
        assertEquals(0, lock.queued());
    }

    /** A waiter that must not block (a coroutine); records the threads that handed it the lock. */
    private static final class Queued extends TrackedLock.Deferred {
        final List<String> grants = new ArrayList<>();

        @Override
        void granted() {
            grants.add(Thread.currentThread().getName());
        }
    }

    @Test
    void aQueuedWaiterIsHandedTheLockWhichStaysHeldUntilItsThreadGoesOn() {
        lock.lock();
        Queued waiter = new Queued();
        assertFalse(lock.lockOrQueue(waiter), "held: the waiter queues, and its caller goes on");
        assertEquals(1, lock.queued());
        assertEquals(List.of(), waiter.grants);
        lock.unlock(); // hands the lock to the waiter, on this thread
        assertEquals(List.of(Thread.currentThread().getName()), waiter.grants);
        assertEquals(0, lock.queued());
        assertFalse(lock.tryLock(), "the lock stays held for the waiter until its thread resumes it");
        lock.resume(waiter);
        lock.unlock();
        assertTrue(lock.tryLock(), "free once the waiter let go");
        lock.unlock();
        LockStatRow s = stats.row("");
        assertEquals(3, s.acquisitions()); // lock, the waiter's resume, tryLock
        assertEquals(1, s.contentions());
    }

    @Test
    void queuedAndBlockedWaitersAreServedInArrivalOrder() throws Exception {
        List<String> order = new CopyOnWriteArrayList<>();
        lock.lock();
        Thread blocked = new Thread(() -> {
            lock.lock();
            order.add("blocked");
            lock.unlock();
        });
        blocked.start();
        awaitQueued(1);
        TrackedLock.Deferred queued = new TrackedLock.Deferred() {
            @Override
            void granted() {
                order.add("queued");
            }
        };
        assertFalse(lock.lockOrQueue(queued));
        lock.unlock(); // to the blocked thread first
        blocked.join(10_000);
        assertEquals(List.of("blocked", "queued"), order, "the blocked waiter came first");
        assertFalse(lock.tryLock(), "handed to the queued waiter by the blocked one's unlock");
        lock.resume(queued);
        lock.unlock();
        assertTrue(lock.tryLock());
    }

    @Test
    void theMutexNeverQueuesItBlocks() {
        TrackedLock mutex = TrackedLock.create(TrackedLockKind.MUTEX, new LockCounters(), false);
        Queued waiter = new Queued();
        assertTrue(mutex.lockOrQueue(waiter), "a QemuMutex waiter blocks its thread: free here, so taken");
        mutex.unlock();
        assertEquals(List.of(), waiter.grants);
    }

    /**
     * Virtual-time waits on a clock the test moves: a spin ({@link VirtualWaits#awaitNanos}) runs what the test
     * scheduled for meanwhile, 1 us in, or else runs out.
     */
    private static final class ScriptedWaits implements VirtualWaits {
        long now;
        final List<Long> spins = new ArrayList<>();
        Runnable meanwhile;

        @Override
        public long now() {
            return now;
        }

        @Override
        public void point() {
        }

        @Override
        public void await(Object token) {
            throw new AssertionError("a waiter that queues never blocks");
        }

        @Override
        public void awaitNanos(Object token, long timeoutNanos) {
            spins.add(timeoutNanos);
            Runnable r = meanwhile;
            meanwhile = null;
            if (r == null) {
                now += timeoutNanos;
            } else {
                now += 1_000;
                r.run();
            }
        }

        @Override
        public void wake(Object token, long delayNanos) {
        }

        @Override
        public long wakeUpNanos() {
            return 5_000;
        }

        @Override
        public long spinNanos(int iterations) {
            return iterations * 20L;
        }
    }

    private static Queued on(int context) {
        Queued q = new Queued();
        q.context = context;
        return q;
    }

    private static ScriptedWaits installWaits() {
        ScriptedWaits waits = new ScriptedWaits();
        VirtualWaits.install(waits);
        return waits;
    }

    @AfterEach
    void uninstallWaits() {
        VirtualWaits.install(null);
    }

    /** QEMU's qemu_co_mutex_lock: the holder alone, on another AioContext: spin, then take it when it is free. */
    @Test
    void aContenderSpinsForAHolderOnAnotherContextAndTakesTheLockWhenFree() {
        ScriptedWaits waits = installWaits();
        Queued holder = on(0);
        assertTrue(lock.lockOrQueue(holder));
        waits.meanwhile = lock::unlock;
        Queued contender = on(1);
        assertTrue(lock.lockOrQueue(contender), "freed during the spin: taken without queueing");
        assertEquals(0, lock.queued());
        assertEquals(List.of(TrackedLock.Yielding.SPIN_ITERATIONS * 20L), waits.spins, "one spin of 1000 turns");
        assertEquals(List.of(), contender.grants);
        LockStatRow s = stats.row("");
        assertEquals(2, s.acquisitions());
        assertEquals(1, s.contentions(), "the spin waited");
        assertEquals(1_000, s.waittimeTotalNs());
    }

    @Test
    void aSpinThatRunsOutQueuesAndLaterContendersQueueAtOnce() {
        ScriptedWaits waits = installWaits();
        assertTrue(lock.lockOrQueue(on(0)));
        Queued first = on(1);
        assertFalse(lock.lockOrQueue(first), "held for the whole spin: queued");
        assertEquals(20_000, waits.now, "1000 turns of 20 ns");
        Queued second = on(2);
        assertFalse(lock.lockOrQueue(second), "another waits already: no spin (waiters > 1)");
        assertEquals(1, waits.spins.size());
        assertEquals(2, lock.queued());
        lock.unlock();
        assertEquals(1, first.grants.size(), "FIFO: the first queued is handed the lock");
        assertEquals(0, second.grants.size());
    }

    @Test
    void aContenderDoesNotSpinForAHolderOnItsOwnContext() {
        ScriptedWaits waits = installWaits();
        assertTrue(lock.lockOrQueue(on(3)));
        assertFalse(lock.lockOrQueue(on(3)), "its own I/O thread cannot let go while it spins");
        assertEquals(List.of(), waits.spins);
        assertEquals(1, lock.queued());
    }

    @Test
    void aSpinnerQueuesWhenTheLockPassesToAHolderOnItsOwnContext() {
        ScriptedWaits waits = installWaits();
        assertTrue(lock.lockOrQueue(on(0)));
        Queued sameThread = on(1);
        waits.meanwhile = () -> {
            VirtualWaits.install(null);
            assertFalse(lock.lockOrQueue(sameThread), "spins in real time, 1000 turns, then queues");
            VirtualWaits.install(waits);
            lock.unlock(); // handed to sameThread, on context 1
        };
        Queued spinner = on(1);
        assertFalse(lock.lockOrQueue(spinner), "the holder is on its own context now: stop spinning, queue");
        assertEquals(1, sameThread.grants.size());
        assertEquals(1, waits.spins.size());
        assertEquals(1_000, waits.now, "left the spin as soon as the lock passed");
        assertEquals(1, lock.queued());
    }
}
