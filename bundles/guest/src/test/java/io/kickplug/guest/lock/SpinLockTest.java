package io.kickplug.guest.lock;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.lockstat.LockStatRow;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SpinLockTest {

    private final AtomicLong clock = new AtomicLong();
    private final LockRegistry registry = new LockRegistry();
    private final SpinLock lock = new SpinLock(registry.lockClass("d1 vq0"), clock::get);

    private void hold(int cpu, long from, long to) {
        clock.set(from);
        lock.lock(cpu);
        clock.set(to);
        lock.unlock();
    }

    @Test
    void scriptedSequenceGivesLockStatColumns() throws Exception {
        hold(0, 100, 150); // first acquisition ever: no bounce; hold 50
        hold(0, 200, 230); // same vCPU: no bounce; hold 30
        hold(1, 300, 400); // vCPU 1 after vCPU 0: acq-bounce; hold 100

        // Contended: vCPU 2 waits while vCPU 1 holds the lock from 1000 to 1700.
        clock.set(1000);
        lock.lock(1); // same vCPU as the last acquisition: no bounce
        CompletableFuture<Void> waiter = CompletableFuture.runAsync(() -> {
            lock.lock(2); // contention at 1000 (last acquirer vCPU 1: con-bounce), acquired at 1700
            clock.set(1900);
            lock.unlock(); // hold 200
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (lock.waiters() == 0) {
            assertTrue(System.nanoTime() < deadline, "waiter never started spinning");
            Thread.onSpinWait();
        }
        clock.set(1700);
        lock.unlock(); // hold 700
        waiter.get(10, TimeUnit.SECONDS);

        LockStatRow row = registry.rows().get(0);
        assertEquals(new LockStatRow("d1 vq0", 1, 1, 700, 700, 700, 2, 5, 30, 700, 50 + 30 + 100 + 700 + 200), row);
    }

    @Test
    void resetZeroesAndMinimumsReadZeroWhenEmpty() {
        hold(0, 0, 10);
        registry.reset();
        assertEquals(new LockStatRow("d1 vq0", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), registry.rows().get(0));
        hold(1, 20, 25);
        // The bounce state is the lock's, not the statistics': vCPU 1 after vCPU 0 still bounces.
        assertEquals(new LockStatRow("d1 vq0", 0, 0, 0, 0, 0, 1, 1, 5, 5, 5), registry.rows().get(0));
    }

    @Test
    void onlyTheHolderUnlocksAndTheLockIsNotReentrant() {
        assertThrows(IllegalMonitorStateException.class, lock::unlock);
        lock.lock(0);
        assertThrows(IllegalStateException.class, () -> lock.lock(0));
        assertTrue(lock.isHeldByCurrentThread());
        lock.unlock();
        assertFalse(lock.isHeldByCurrentThread());
    }

    @Test
    void locksOfOneNameShareTheirClass() {
        SpinLock other = new SpinLock(registry.lockClass("d1 vq0"), clock::get);
        hold(0, 0, 1);
        other.lock(0);
        other.unlock();
        assertEquals(2, registry.rows().get(0).acquisitions());
        assertEquals(1, registry.rows().size());
    }
}
