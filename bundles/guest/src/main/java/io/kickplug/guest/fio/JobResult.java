package io.kickplug.guest.fio;

import java.util.ArrayList;
import java.util.List;

/**
 * The outcome of one job, or of a group of jobs merged for {@code group_reporting} (sums of I/Os, bytes,
 * latency series and CPU time; the longest runtime, as fio's group reporting takes).
 */
public final class JobResult {

    /** fio's err= value for a verify failure (EILSEQ). */
    public static final int EILSEQ = 84;
    /** fio's err= value for an I/O error (EIO). */
    public static final int EIO = 5;

    private final String name;
    private final int groupId;
    private int jobs;
    private final DirectionStats read = new DirectionStats();
    private final DirectionStats write = new DirectionStats();
    private final IopsTimeline timeline = new IopsTimeline();
    private long runtimeNanos;
    private long summedRuntimeNanos;
    private long usrNanos;
    private long sysNanos;
    private int error;
    private final List<String> errors = new ArrayList<>();

    public JobResult(String name, int groupId) {
        this.name = name;
        this.groupId = groupId;
        this.jobs = 1;
    }

    /** A group's result: the sum of {@code parts}, named after the first. */
    public static JobResult merge(List<JobResult> parts) {
        JobResult sum = new JobResult(parts.get(0).name, parts.get(0).groupId);
        sum.jobs = 0;
        for (JobResult p : parts) {
            sum.jobs += p.jobs;
            sum.read.add(p.read);
            sum.write.add(p.write);
            sum.timeline.add(p.timeline);
            sum.runtimeNanos = Math.max(sum.runtimeNanos, p.runtimeNanos);
            sum.summedRuntimeNanos += p.summedRuntimeNanos;
            sum.usrNanos += p.usrNanos;
            sum.sysNanos += p.sysNanos;
            if (sum.error == 0) {
                sum.error = p.error;
            }
            sum.errors.addAll(p.errors);
        }
        return sum;
    }

    public String name() {
        return name;
    }

    public int groupId() {
        return groupId;
    }

    public int jobs() {
        return jobs;
    }

    /** Completions over time (both directions), for the IOPS-over-time curve. */
    public IopsTimeline timeline() {
        return timeline;
    }

    public DirectionStats read() {
        return read;
    }

    public DirectionStats write() {
        return write;
    }

    /** Wall time the statistics cover (after ramp), nanoseconds. */
    public long runtimeNanos() {
        return runtimeNanos;
    }

    public void runtimeNanos(long nanos) {
        this.runtimeNanos = nanos;
        this.summedRuntimeNanos = nanos;
    }

    public void cpu(long usr, long sys) {
        this.usrNanos = usr;
        this.sysNanos = sys;
    }

    /** CPU time in user mode as a percentage of the runtime (summed over a group's jobs, as fio). */
    public double usrPercent() {
        return percentOfRuntime(usrNanos);
    }

    public double sysPercent() {
        return percentOfRuntime(sysNanos);
    }

    private double percentOfRuntime(long nanos) {
        return summedRuntimeNanos == 0 ? 0 : 100.0 * nanos / summedRuntimeNanos;
    }

    public long usrNanos() {
        return usrNanos;
    }

    public long sysNanos() {
        return sysNanos;
    }

    /** fio's errno for the job: 0, {@link #EILSEQ} (verify) or {@link #EIO}. */
    public int error() {
        return error;
    }

    /** The lines that explain {@link #error()}, first failure first. */
    public List<String> errors() {
        return List.copyOf(errors);
    }

    public void fail(int errno, String message) {
        if (error == 0) {
            error = errno;
        }
        errors.add(message);
    }
}
