package io.kickplug.guest.engine;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.function.LongSupplier;

/** What {@link VirtualTime}'s measured charging takes from the host: the thread CPU clock and two calibrations. */
final class HostCosts {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /**
     * What one reading of the thread's CPU clock costs (median of back-to-back readings, taken once): a charge
     * spans one reading, which is the simulation's own work, not the guest's or the device's, so it is taken off.
     */
    static final long CPU_CLOCK_READ_NS = calibrate(HostCosts::cpu);
    /** What one {@link System#nanoTime} reading costs, measured the same way: the clock of pinned actors. */
    static final long NANO_TIME_READ_NS = calibrate(System::nanoTime);

    private HostCosts() {
    }

    /** The current thread's CPU time in ns. */
    static long cpu() {
        return THREADS.getCurrentThreadCpuTime();
    }

    /** One turn of a spin loop on this host, measured once when measured charging first needs it. */
    static long spinIterationNs() {
        return SpinCost.ITERATION_NS;
    }

    private static final class SpinCost {
        static final long ITERATION_NS = calibrate();
        /** A lock that stays held, by another context: the yielding tracked lock's two reads per turn. */
        private static volatile boolean held = true;
        private static volatile int holder = -1;

        /** The median of 101 timings of 1000 turns of a spin that runs out; most of them compiled. */
        private static long calibrate() {
            long[] d = new long[101];
            for (int r = 0; r < d.length; r++) {
                long t = System.nanoTime();
                for (int i = 0; i < 1000 && held && holder != 0; i++) {
                    Thread.onSpinWait();
                }
                d[r] = (System.nanoTime() - t) / 1000;
            }
            Arrays.sort(d);
            return Math.max(1, d[d.length / 2]);
        }
    }

    private static long calibrate(LongSupplier clock) {
        if (!THREADS.isCurrentThreadCpuTimeSupported()) {
            return 0;
        }
        long[] d = new long[2001];
        for (int i = 0; i < d.length; i++) {
            long a = clock.getAsLong();
            d[i] = clock.getAsLong() - a;
        }
        Arrays.sort(d);
        return Math.max(0, d[d.length / 2]);
    }
}
