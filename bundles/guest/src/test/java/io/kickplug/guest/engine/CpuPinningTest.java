package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.iothread.VirtualWaits;
import java.util.BitSet;
import java.util.concurrent.Callable;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
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
        assumeTrue(CpuPinning.works(), "no procfs or no taskset here");
        String cpu = Integer.toString(CpuPinning.lastAllowedCpu());
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
        assumeTrue(CpuPinning.works(), "no procfs or no taskset here");
        String cpu = Integer.toString(CpuPinning.lastAllowedCpu());
        VirtualTime time = new VirtualTime(1, VirtualTime.Charging.MODEL, VirtualTime.Costs.DEFAULTS, true);
        time.pinActors(cpu);
        IoThread io = time.start("io0");
        AtomicReference<String> asActor = new AtomicReference<>();
        try {
            io.execute(() -> asActor.set(CpuPinning.currentThreadAllowedList()));
            assertTrue(time.awaitIdle(TimeUnit.SECONDS.toNanos(30)), "the I/O thread did not finish");
        } finally {
            time.shutdown();
            io.close();
        }
        assertEquals(cpu, asActor.get());
        assertEquals(1, time.pinnedActors());
        assertThrows(IllegalArgumentException.class, () -> time.pinActors("x"));
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void pinnedVirtualTimeChargesTheWallClockAnActorHoldsTheBatonFor() throws Exception {
        assumeTrue(CpuPinning.works(), "no procfs or no taskset here");
        String cpu = Integer.toString(CpuPinning.lastAllowedCpu());
        // A sleep is wall time and no CPU time: the wall clock charges it, the thread CPU clock would not.
        assertTrue(chargeOfASleep(VirtualTime.pinned(1, VirtualTime.Charging.MEASURED, VirtualTime.Costs.DEFAULTS,
                true, cpu)) >= TimeUnit.MILLISECONDS.toNanos(20));
        assertTrue(chargeOfASleep(new VirtualTime(1, VirtualTime.Charging.MEASURED, VirtualTime.Costs.DEFAULTS,
                true)) < TimeUnit.MILLISECONDS.toNanos(10));
    }

    private static long chargeOfASleep(VirtualTime time) throws Exception {
        IoThread io = time.start("io0");
        AtomicLong charged = new AtomicLong(-1);
        try {
            io.execute(() -> {
                VirtualWaits v = VirtualWaits.current();
                long first = v.now();
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                charged.set(v.now() - first);
            });
            assertTrue(time.awaitIdle(TimeUnit.SECONDS.toNanos(30)), "the I/O thread did not finish");
        } finally {
            time.shutdown();
            io.close();
        }
        return charged.get();
    }

    /** Runs {@code body} on a new thread and returns its result; its failure fails the test. */
    private static String onNewThread(Callable<String> body) throws Exception {
        FutureTask<String> task = new FutureTask<>(body);
        new Thread(task).start();
        return task.get(30, TimeUnit.SECONDS);
    }
}
