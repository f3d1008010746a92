package io.kickplug.blk.tracked;

import io.kickplug.api.lockstat.LockCounters;
import io.kickplug.api.lockstat.LockStatRow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.TrackedLockKind;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The yielding lock queues contenders FIFO and hands ownership to the first on unlock (like CoMutex). */
class YieldingLockTest {

    private static void awaitQueued(TrackedLock.Yielding lock, int n) {
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
        LockCounters stats = new LockCounters();
        TrackedLock.Yielding lock = new TrackedLock.Yielding(stats);
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
            awaitQueued(lock, i + 1); // arrival order is the start order
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
        LockCounters stats = new LockCounters();
        TrackedLock.Yielding lock = new TrackedLock.Yielding(stats);
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
        TrackedLock.Yielding lock = new TrackedLock.Yielding(new LockCounters());
        List<String> order = new CopyOnWriteArrayList<>();
        lock.lock();
        Thread blocked = new Thread(() -> {
            lock.lock();
            order.add("blocked");
            lock.unlock();
        });
        blocked.start();
        awaitQueued(lock, 1);
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
        TrackedLock mutex = TrackedLock.create(TrackedLockKind.MUTEX, new LockCounters());
        Queued waiter = new Queued();
        assertTrue(mutex.lockOrQueue(waiter), "a QemuMutex waiter blocks its thread: free here, so taken");
        mutex.unlock();
        assertEquals(List.of(), waiter.grants);
    }
}
