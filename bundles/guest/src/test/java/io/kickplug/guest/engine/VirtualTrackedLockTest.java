package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.iothread.VirtualWaits;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.blk.tracked.TrackedRequests;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The device's tracked-requests lock in virtual time (seed 004): its acquisition and its release are scheduling
 * points, so two I/O threads meet on it, a contended acquirer waits in virtual time, and a release wakes it after
 * the modelled wake-up of a blocked thread. The yielding lock hands itself to the woken waiter, so it stays held
 * through that wake-up; the mutex is free from the release on. Model charging: nothing here depends on the host.
 */
class VirtualTrackedLockTest {

    private static final int REQUESTS = 200;

    record Outcome(LockStatRow row, long virtualNanos, long switches) {
    }

    /** Two I/O threads of one virtual time each register and end {@link #REQUESTS} reads under {@code kind}. */
    private static Outcome run(TrackedLockKind kind, long seed) throws Exception {
        VirtualTime time = new VirtualTime(seed, Charging.MODEL, ModelCosts.DEFAULTS, true);
        TrackedRequests tracked = new TrackedRequests(kind, 2);
        List<IoThread> threads = new ArrayList<>();
        try {
            for (int t = 0; t < 2; t++) {
                threads.add(time.start("io" + t));
            }
            List<Runnable> work = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int io = t;
                work.add(() -> {
                    for (int i = 0; i < REQUESTS; i++) {
                        long first = (io * REQUESTS + i) * 8L;
                        TrackedRequests.Request r = tracked.begin(TrackedRequests.Access.READ, first, first + 8, io,
                                () -> { });
                        assertTrue(r.arm(), "a read waits for nothing");
                        r.end();
                    }
                });
            }
            // io1's work is handed over from io0's turn, so it starts at a virtual time, not when the host gets to it.
            threads.get(0).execute(() -> {
                threads.get(1).execute(work.get(1));
                work.get(0).run();
            });
            assertTrue(time.awaitIdle(TimeUnit.SECONDS.toNanos(60)), "the I/O threads did not finish");
            Outcome o = new Outcome(tracked.stats(kind).row("tracked"), time.latestClock(), time.switches());
            assertEquals(0, tracked.size()); // after the row: size() takes the lock too
            return o;
        } finally {
            time.shutdown();
            threads.forEach(IoThread::close);
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void twoIoThreadsContendOnTheTrackedLockInVirtualTime() throws Exception {
        for (TrackedLockKind kind : List.of(TrackedLockKind.YIELDING, TrackedLockKind.MUTEX)) {
            Outcome o = run(kind, 7);
            assertEquals(4L * REQUESTS, o.row().acquisitions(), kind.label());
            assertTrue(o.row().contentions() > 0, kind.label() + ": the I/O threads never met on the lock: " + o);
            // A contended waiter blocked: it runs again only after the wake-up of a blocked thread.
            assertTrue(o.row().waittimeMaxNs() >= ModelCosts.DEFAULTS.threadWakeNs(), kind.label() + ": " + o);
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theYieldingLockStaysHeldThroughTheWaitersWakeUpAndTakesLonger() throws Exception {
        Outcome yielding = run(TrackedLockKind.YIELDING, 7);
        Outcome mutex = run(TrackedLockKind.MUTEX, 7);
        // Sharded: one list per I/O thread, so the two threads never meet.
        Outcome sharded = run(TrackedLockKind.SHARDED, 7);
        assertEquals(0, sharded.row().contentions(), sharded.toString());
        assertTrue(yielding.virtualNanos() > mutex.virtualNanos(), "yielding " + yielding + ", mutex " + mutex);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theSameSeedReplaysTheSameContention() throws Exception {
        for (TrackedLockKind kind : List.of(TrackedLockKind.YIELDING, TrackedLockKind.MUTEX)) {
            Outcome a = run(kind, 11);
            Outcome b = run(kind, 11);
            assertEquals(a.row(), b.row(), kind.label());
            assertEquals(a.virtualNanos(), b.virtualNanos(), kind.label());
        }
    }

    /** The yielding lock's spin: a timed wait in virtual time ends at the token's wake, or else at its timeout. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aTimedWaitEndsAtItsWakeOrAtItsTimeout() throws Exception {
        VirtualTime time = new VirtualTime(1, Charging.MODEL, ModelCosts.DEFAULTS, true);
        List<IoThread> threads = List.of(time.start("io0"), time.start("io1"));
        Object token = new Object();
        long[] waited = {-1, -1, -1};
        try {
            threads.get(0).execute(() -> {
                threads.get(1).execute(() -> {
                    VirtualWaits v = VirtualWaits.current();
                    v.awaitNanos(new Object(), 3_000); // nobody wakes this one: it runs out
                    v.wake(token, 0);
                });
                VirtualWaits v = VirtualWaits.current();
                long start = v.now();
                v.awaitNanos(token, 10_000);
                waited[0] = v.now() - start;
                start = v.now();
                v.awaitNanos(token, 10_000);
                waited[1] = v.now() - start;
                waited[2] = v.spinNanos(1_000);
            });
            assertTrue(time.awaitIdle(TimeUnit.SECONDS.toNanos(30)), "the I/O threads did not finish");
        } finally {
            time.shutdown();
            threads.forEach(IoThread::close);
        }
        assertEquals(3_000, waited[0], "woken by io1 after its own 3 us wait ran out");
        assertEquals(10_000, waited[1], "nobody woke it: its timeout");
        assertEquals(20_000, waited[2], "model charging: 1000 spin turns of the model's 20 ns");
    }
}
