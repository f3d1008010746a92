package io.kickplug.guest.fio;

import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The outcome of one {@code kp:fio} run: every job's result, what is reported (all jobs, or each group
 * merged when {@code group_reporting} is set), and the guest settings the run used.
 *
 * @param jobs one result per job, in job order
 * @param specs the jobs as run, in the same order
 * @param guest the guest settings and counters, printed with every run
 * @param time when the run started
 */
public record FioReport(List<JobResult> jobs, List<JobSpec> specs, GuestInfo guest, ZonedDateTime time) {

    /**
     * The simulated guest as it ran: what a benchmark must print beside its numbers.
     *
     * @param notifies QueueNotify writes (VM exits) during the run
     * @param interrupts interrupts delivered during the run
     * @param deviceCpuNanos CPU time of the disk's device I/O threads during the run, or -1 when unknown
     * @param runNanos wall time of the run
     */
    public record GuestInfo(String disk, long capacityBytes, int vcpus, int queues, long exitLatencyNs,
            long injectLatencyNs, String kickPolicy, long notifies, long interrupts, long deviceCpuNanos,
            long runNanos) {

        public GuestInfo(String disk, long capacityBytes, int vcpus, int queues, long exitLatencyNs,
                long injectLatencyNs, String kickPolicy, long notifies, long interrupts) {
            this(disk, capacityBytes, vcpus, queues, exitLatencyNs, injectLatencyNs, kickPolicy, notifies,
                    interrupts, -1, 0);
        }

        /** Device I/O-thread CPU as a percentage of one CPU over the run, or -1 when unknown. */
        public double deviceCpuPercent() {
            return deviceCpuNanos < 0 || runNanos <= 0 ? -1 : 100.0 * deviceCpuNanos / runNanos;
        }
    }

    public FioReport {
        jobs = List.copyOf(jobs);
        specs = List.copyOf(specs);
        Objects.requireNonNull(guest, "guest");
        Objects.requireNonNull(time, "time");
    }

    /** What fio prints: each job, or one merged entry for group 0 when any job asks for group_reporting. */
    public List<JobResult> reported() {
        boolean group = specs.stream().anyMatch(JobSpec::groupReporting);
        return group ? List.of(JobResult.merge(jobs)) : jobs;
    }

    /** Whether any job failed (I/O error or verify failure). */
    public boolean failed() {
        return jobs.stream().anyMatch(j -> j.error() != 0);
    }

    /** One line per failure: "job 'f1': crc32c: verify failed at file /dev/vdc offset 8192, ...". */
    public List<String> errorLines() {
        List<String> lines = new ArrayList<>();
        for (JobResult j : jobs) {
            for (String e : j.errors()) {
                lines.add("job '" + j.name() + "': " + e);
            }
        }
        return lines;
    }
}
