package io.kickplug.guest.bench;

import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.guest.fio.DirectionStats;
import io.kickplug.guest.engine.VirtualTime;
import io.kickplug.guest.fio.JobResult;
import java.util.List;
import java.util.Set;

/**
 * What one point measured.
 *
 * @param longSlices measured slices of virtual time longer than {@link VirtualTime#LONG_SLICE_NS}: the host ran
 *     something else on the actors' CPU, or the JVM paused (0 in real threads and under model charging)
 * @param longSliceNanos what they took on the clock
 * @param guestCpuNanos measured charging: the guest's code's CPU time (vCPUs outside exits), long slices left out;
 *     0 in real threads and under model charging
 * @param deviceCpuNanos measured charging: the device's code's CPU time (I/O threads, exits), the same way
 */
record SeedPoint(JobResult all, double iops, long requests, long interruptsSent, long interruptsSuppressed,
        Set<String> strategiesUsed, List<LockStatRow> locks, long availNotifications, long features, long longSlices,
        long longSliceNanos, long guestCpuNanos, long deviceCpuNanos) {

    SeedPoint(JobResult all, double iops, long requests, long interruptsSent, long interruptsSuppressed,
            Set<String> strategiesUsed, List<LockStatRow> locks, long availNotifications, long features) {
        this(all, iops, requests, interruptsSent, interruptsSuppressed, strategiesUsed, locks, availNotifications,
                features, 0, 0, 0, 0);
    }

    /** Measured charging: the guest's CPU ns per device request (NaN without either). */
    double guestNanosPerRequest() {
        return requests == 0 || guestCpuNanos == 0 ? Double.NaN : (double) guestCpuNanos / requests;
    }

    /** Measured charging: the device's CPU ns per device request (NaN without either). */
    double deviceNanosPerRequest() {
        return requests == 0 || deviceCpuNanos == 0 ? Double.NaN : (double) deviceCpuNanos / requests;
    }

    double notifiesPerRequest() {
        return requests == 0 ? Double.NaN : (double) availNotifications / requests;
    }

    double interruptsPerRequest() {
        return requests == 0 ? Double.NaN : (double) interruptsSent / requests;
    }

    double suppressedPerRequest() {
        return requests == 0 ? Double.NaN : (double) interruptsSuppressed / requests;
    }

    DirectionStats stats() {
        return all.read().ios() >= all.write().ios() ? all.read() : all.write();
    }

    double latMeanUs() {
        return stats().lat().count() == 0 ? Double.NaN : stats().lat().mean() / 1e3;
    }

    double latP99Us() {
        return stats().lat().count() == 0 ? Double.NaN : stats().lat().percentile(99) / 1e3;
    }

    /** The lock class named {@code name}, or {@code null}. */
    LockStatRow lock(String name) {
        return locks.stream().filter(r -> r.name().equals(name)).findFirst().orElse(null);
    }
}
