package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kickplug.api.iothread.VirtualWaits;
import java.util.BitSet;
import java.util.concurrent.Callable;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Pinning one thread by its kernel id, and virtual time's actors on one CPU while they are actors. */
class CpuPinningTest {

    @Test
    void parsesLinuxCpuLists() {
        BitSet b = CpuPinning.parseList("0-2, 5,7-8");
        assertEquals("{0, 1, 2, 5, 7, 8}", b.toString());
        assertEquals("{3}", CpuPinning.parseList("3").toString());
        assertThrows(IllegalArgumentException.class, () -> CpuPinning.parseList(""));
        assertThrows(IllegalArgumentException.class, () -> CpuPinning.parseList("2-1"));
        assertThrows(IllegalArgumentException.class, () -> CpuPinning.parseList("1,,2"));
        assertThrows(IllegalArgumentException.class, () -> CpuPinning.parseList("-1"));
        assertThrows(IllegalArgumentException.class, () -> CpuPinning.parseList("a-b"));
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void pinsOnlyTheCallingThread() throws Exception {
        assumeTrue(CpuPinning.works(), "no procfs or no taskset here");
        int last = CpuPinning.lastAllowedCpu();
        assertTrue(last >= 0);
        String processWide = CpuPinning.allowedList();
        String inside = onNewThread(() -> {
            String before = CpuPinning.currentThreadAllowedList();
            assertTrue(CpuPinning.pinCurrentThread(Integer.toString(last)));
            String pinned = CpuPinning.currentThreadAllowedList();
            assertTrue(CpuPinning.pinCurrentThread(before));
            return pinned;
        });
        assertEquals(Integer.toString(last), inside);
        assertEquals(processWide, CpuPinning.currentThreadAllowedList(), "another thread's pin must not move this one");
        assertEquals(processWide, CpuPinning.allowedList());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aReservationMovesEveryOtherThreadOffTheActorsCpuAndGivesItBack() throws Exception {
        String cpu = pinnableCpu();
        assumeTrue(CpuPinning.leavesOthers(cpu), "one CPU only");
        String processWide = CpuPinning.allowedList();
        try (CpuPinning.Reservation r = CpuPinning.reserve(cpu)) {
            assertTrue(r != null);
            String mine = CpuPinning.currentThreadAllowedList();
            assertFalse(CpuPinning.parseList(mine).get(Integer.parseInt(cpu)), mine);
            assertEquals(mine, onNewThread(CpuPinning::currentThreadAllowedList),
                    "a thread created meanwhile inherits the reservation");
        }
        assertEquals(processWide, CpuPinning.currentThreadAllowedList());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void virtualTimeRunsItsActorsOnThePinnedCpuAndReleasesThemWhenTheyRetire() throws Exception {
        String cpu = pinnableCpu();
        VirtualTime time = new VirtualTime(1, Charging.MODEL, ModelCosts.DEFAULTS, true);
        time.pinActors(cpu);
        AtomicReference<String> asActor = new AtomicReference<>();
        VirtualTimeRuns.onOneIoThread(time, () -> asActor.set(CpuPinning.currentThreadAllowedList()));
        assertEquals(cpu, asActor.get());
        assertEquals(1, time.pinnedActors());
        assertThrows(IllegalArgumentException.class, () -> time.pinActors("x"));
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void pinnedVirtualTimeChargesTheWallClockAnActorHoldsTheBatonFor() throws Exception {
        String cpu = pinnableCpu();
        // A wait is wall time and no CPU time: the wall clock charges it, the thread CPU clock would not.
        assertTrue(chargeOfAWallClockWait(VirtualTime.pinned(1, Charging.MEASURED,
                ModelCosts.DEFAULTS, true, cpu)) >= TimeUnit.MILLISECONDS.toNanos(20));
        assertTrue(chargeOfAWallClockWait(new VirtualTime(1, Charging.MEASURED,
                ModelCosts.DEFAULTS, true)) < TimeUnit.MILLISECONDS.toNanos(10));
    }

    /**
     * What {@code time} charges an actor that waits 20 ms of wall time without running: the elapsed time is what
     * is measured here, not a synchronization, so the actor parks until the wall clock has moved that far.
     */
    private static long chargeOfAWallClockWait(VirtualTime time) {
        AtomicLong charged = new AtomicLong(-1);
        VirtualTimeRuns.onOneIoThread(time, () -> {
            VirtualWaits v = VirtualWaits.current();
            long first = v.now();
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
            for (long left; (left = end - System.nanoTime()) > 0; ) {
                LockSupport.parkNanos(left);
            }
            charged.set(v.now() - first);
        });
        return charged.get();
    }

    /** The CPU the tests pin to (the last one); skips the test where threads cannot be pinned. */
    private static String pinnableCpu() {
        assumeTrue(CpuPinning.works(), "no procfs or no taskset here");
        return Integer.toString(CpuPinning.lastAllowedCpu());
    }

    /** Runs {@code body} on a new thread and returns its result; its failure fails the test. */
    private static String onNewThread(Callable<String> body) throws Exception {
        FutureTask<String> task = new FutureTask<>(body);
        new Thread(task).start();
        return task.get(30, TimeUnit.SECONDS);
    }
}
