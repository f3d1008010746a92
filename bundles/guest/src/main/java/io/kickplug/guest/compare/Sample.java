package io.kickplug.guest.compare;

import io.kickplug.api.notify.QueueCounters;
import java.util.List;

/**
 * One run of a comparison: the fio job's figures and the disk's per-queue counters over the run (after minus
 * before, summed over the queues).
 *
 * @param candidate the strategy the disk's queues used
 * @param round 0-based
 * @param ios I/Os the job completed
 * @param seconds the job's run time
 * @param requests requests the device took (all queues)
 * @param interrupts used-buffer notifications sent
 * @param kicks available-buffer notifications received
 * @param p50Micros median completion latency (HdrHistogram, read and write together)
 * @param p99Micros 99th percentile completion latency
 * @param cpuNanos the disk's device I/O-thread CPU time over the run, or -1 when unknown
 * @param errors the job's errors (verify, I/O), empty when it passed
 */
public record Sample(String candidate, int round, long ios, double seconds, long requests, long interrupts,
        long kicks, double p50Micros, double p99Micros, long cpuNanos, List<String> errors) {

    public Sample {
        errors = List.copyOf(errors);
    }

    public double iops() {
        return seconds > 0 ? ios / seconds : Double.NaN;
    }

    public double interruptsPerRequest() {
        return requests > 0 ? (double) interrupts / requests : Double.NaN;
    }

    public double kicksPerRequest() {
        return requests > 0 ? (double) kicks / requests : Double.NaN;
    }

    /** Device CPU per I/O in microseconds, NaN when unknown. */
    public double cpuMicrosPerIo() {
        return cpuNanos < 0 || ios == 0 ? Double.NaN : cpuNanos / 1e3 / ios;
    }

    /** The counters summed over the queues: {requests, interrupts sent, kicks received}. */
    public static long[] totals(List<QueueCounters> queues) {
        long[] t = new long[3];
        for (QueueCounters q : queues) {
            t[0] += q.requests();
            t[1] += q.interruptsSent();
            t[2] += q.availNotifications();
        }
        return t;
    }
}
