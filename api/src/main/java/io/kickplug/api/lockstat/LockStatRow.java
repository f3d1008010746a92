package io.kickplug.api.lockstat;

import java.util.List;

/**
 * One lock class of the lock statistics, with the columns of Linux's /proc/lock_stat. Times are kept in
 * nanoseconds here; /proc/lock_stat (and {@code kp:lockstat}) prints them in microseconds.
 *
 * <p>A bounce is an event on a vCPU other than the one that last acquired the lock: {@code conBounces}
 * counts contentions, {@code acqBounces} acquisitions, for which that holds (as lockdep compares
 * {@code lock->cpu} with the current CPU). Wait times are recorded for contended acquisitions only; hold
 * times for every acquisition, from acquired to released.
 *
 * @param name the lock class, e.g. {@code "d1 vq0"}
 * @param conBounces contentions on another vCPU than the last acquirer's
 * @param contentions acquisitions that found the lock held and had to wait
 * @param acqBounces acquisitions on another vCPU than the last acquirer's
 * @param acquisitions all acquisitions
 */
public record LockStatRow(String name, long conBounces, long contentions, long waittimeMinNs, long waittimeMaxNs,
        long waittimeTotalNs, long acqBounces, long acquisitions, long holdtimeMinNs, long holdtimeMaxNs,
        long holdtimeTotalNs) {

    /** /proc/lock_stat's column names, in its order (after the class name). */
    public static final List<String> COLUMNS = List.of("con-bounces", "contentions", "waittime-min", "waittime-max",
            "waittime-total", "acq-bounces", "acquisitions", "holdtime-min", "holdtime-max", "holdtime-total");
}
