package io.kickplug.blk.tracked;

import io.kickplug.api.lockstat.LockCounters;
import io.kickplug.api.lockstat.LockStatRow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
}
