package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kickplug.api.iothread.VirtualWaits;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Measured charging charges the code that ran, not the simulation's own readings of the thread CPU clock: where that
 * reading is a system call (1.3-1.5 us on the 2-core CI machine), the tracked lock's statistics and the guest's
 * timestamps, a few readings per request, would otherwise lengthen every critical section they bracket.
 *
 * <p>The CPU clock here is a per-thread fake in which every reading costs exactly {@link #READ_COST_NS} and the
 * test's "work" advances it by a stated amount, so the charge is exact and does not depend on the host's timing
 * (a real clock's readings vary around their calibrated median under load).
 */
class VirtualTimeMeasuredClockTest {

    private static final int READINGS = 1000;
    private static final long READ_COST_NS = 1500;

    /** A thread CPU clock: each thread's own time, advanced by every reading's cost and by declared work. */
    private static final class FakeCpuClock implements LongSupplier {
        private final ThreadLocal<long[]> time = ThreadLocal.withInitial(() -> new long[1]);

        @Override
        public long getAsLong() {
            long[] t = time.get();
            t[0] += READ_COST_NS; // the reading itself costs this much, charged to the reader's thread
            return t[0];
        }

        void work(long nanos) {
            time.get()[0] += nanos;
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void readingTheVirtualClockDoesNotChargeTheReadingsOwnCost() throws Exception {
        assertEquals(0, advanceOver(READINGS, 0, READ_COST_NS),
                "readings alone, with their cost taken off, must not advance the virtual clock");
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void readingsChargedAsWorkWithoutTheCostTakenOff() throws Exception {
        // The control: the same readings with no cost taken off advance the clock by what they cost.
        assertEquals((READINGS + 1) * READ_COST_NS, advanceOver(READINGS, 0, 0));
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void workBetweenReadingsIsChargedExactly() throws Exception {
        long work = 7_000;
        assertEquals(READINGS * work, advanceOver(READINGS, work, READ_COST_NS));
    }

    /**
     * What an I/O thread's code took counts as the device's (guest-cpu-ns/req and device-cpu-ns/req in the seeds'
     * report), and a slice longer than {@link VirtualTime#LONG_SLICE_NS} (another process's time slice on the
     * pinned CPU) counts in neither, though the clock is charged it.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void anIoThreadsWorkIsTheDevicesAndLongSlicesAreLeftOut() throws Exception {
        FakeCpuClock cpu = new FakeCpuClock();
        VirtualTime time = new VirtualTime(3, Charging.MEASURED, ModelCosts.DEFAULTS, true, cpu,
                READ_COST_NS);
        VirtualTimeRuns.onOneIoThread(time, () -> {
            VirtualWaits v = VirtualWaits.current();
            v.now();
            for (int i = 0; i < 100; i++) {
                cpu.work(7_000);
                v.now();
            }
            cpu.work(VirtualTime.LONG_SLICE_NS + 1);
            v.now();
        });
        assertEquals(100 * 7_000, time.deviceCpuNanos());
        assertEquals(0, time.guestCpuNanos());
        assertEquals(1, time.longSlices());
    }

    /** Runs {@code readings} readings with {@code workNs} of CPU work before each; the virtual clock's advance. */
    private static long advanceOver(int readings, long workNs, long costTakenOffNs) throws Exception {
        FakeCpuClock cpu = new FakeCpuClock();
        VirtualTime time = new VirtualTime(3, Charging.MEASURED, ModelCosts.DEFAULTS, true, cpu,
                costTakenOffNs);
        AtomicLong advance = new AtomicLong(-1);
        VirtualTimeRuns.onOneIoThread(time, () -> {
            VirtualWaits v = VirtualWaits.current();
            long first = v.now();
            for (int i = 0; i < readings; i++) {
                cpu.work(workNs);
                v.now();
            }
            advance.set(v.now() - first);
        });
        return advance.get();
    }
}
