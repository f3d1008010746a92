package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.iothread.VirtualWaits;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Measured charging charges the code that ran, not the simulation's own readings of the thread CPU clock: where that
 * reading is a system call (1.3-1.5 us on the 2-core CI machine), the tracked lock's statistics and the guest's
 * timestamps, a few readings per request, would otherwise lengthen every critical section they bracket.
 */
class VirtualTimeMeasuredClockTest {

    private static final int READINGS = 1000;

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void readingTheVirtualClockDoesNotChargeTheReadingsOwnCost() throws Exception {
        assumeTrue(VirtualTime.CPU_CLOCK_COST_NS >= 200,
                "a CPU clock reading costs " + VirtualTime.CPU_CLOCK_COST_NS + " ns here: too cheap to tell apart");
        VirtualTime time = new VirtualTime(3, VirtualTime.Charging.MEASURED, VirtualTime.Costs.DEFAULTS, true);
        IoThread io = time.start("io0");
        AtomicLong advance = new AtomicLong(-1);
        try {
            io.execute(() -> {
                VirtualWaits v = VirtualWaits.current();
                long sink = 0;
                for (int round = 0; round < 3; round++) { // the last round counts: the loop is compiled by then
                    long first = v.now();
                    for (int i = 0; i < READINGS; i++) {
                        sink += v.now();
                    }
                    advance.set(v.now() - first + (sink & 0));
                }
            });
            assertTrue(time.awaitIdle(TimeUnit.SECONDS.toNanos(30)), "the I/O thread did not finish");
        } finally {
            time.shutdown();
            io.close();
        }
        long charged = advance.get();
        long readings = (READINGS + 1) * VirtualTime.CPU_CLOCK_COST_NS;
        // Charged as work, the readings alone would advance the clock by about `readings`.
        assertTrue(charged >= 0 && charged < readings / 4,
                READINGS + " readings advanced the virtual clock by " + charged + " ns (their cost " + readings + ")");
    }
}
