package io.kickplug.guest.fio;

import io.kickplug.guest.engine.GuestJob;
import io.kickplug.guest.engine.GuestMachine;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.RunResult;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs parsed fio jobs on a booted {@link GuestMachine}: checks them against the disk (filename mapping,
 * size, read-only), makes one {@link FioJob} per job (job i on vCPU i % vcpus, as the machine places
 * them), runs them all at once and collects a {@link FioReport}.
 */
public final class FioRunner {

    /** Bound of a run with no runtime (a whole-disk pass): the machine's own no-progress timeout catches hangs. */
    static final Duration UNBOUNDED_RUN = Duration.ofHours(24);

    private FioRunner() {
    }

    /**
     * @throws FioOptionException when a job does not fit the disk; nothing ran then
     * @throws RuntimeException what the machine throws when the driver fails
     */
    public static FioReport run(GuestMachine machine, String disk, List<JobSpec> specs) {
        return run(machine, disk, specs, () -> -1);
    }

    /**
     * @param deviceCpu the disk's device I/O-thread CPU time so far (ns, or -1 when unknown), read before and
     *     after the run for the report's device CPU figure
     */
    public static FioReport run(GuestMachine machine, String disk, List<JobSpec> specs,
            java.util.function.LongSupplier deviceCpu) {
        MachineConfig config = machine.config();
        long capacity = machine.capacityBytes();
        List<JobSpec.Region> regions = new ArrayList<>();
        for (JobSpec s : specs) {
            FioTarget.check(s, disk);
            if (s.rw().writes() && machine.readOnly()) {
                throw new FioOptionException("job '" + s.name() + "': rw=" + s.rw().fioName() + " writes, but disk '"
                        + disk + "' is read-only (VIRTIO_BLK_F_RO)");
            }
            regions.add(s.region(disk, capacity));
        }
        int vcpus = config.vcpus();
        int[] perVcpu = new int[vcpus];
        for (int i = 0; i < specs.size(); i++) {
            perVcpu[i % vcpus]++;
        }
        List<FioJob> jobs = new ArrayList<>();
        for (int i = 0; i < specs.size(); i++) {
            JobSpec s = specs.get(i);
            jobs.add(new FioJob(s, regions.get(i), s.filename() != null ? s.filename() : disk, perVcpu[i % vcpus]));
        }
        ZonedDateTime time = ZonedDateTime.now();
        long cpuBefore = deviceCpu.getAsLong();
        long start = System.nanoTime();
        RunResult run = machine.runJobs(List.<GuestJob>copyOf(jobs), timeout(specs));
        long runNanos = System.nanoTime() - start;
        long cpuAfter = deviceCpu.getAsLong();
        long cpu = cpuBefore < 0 || cpuAfter < 0 ? -1 : cpuAfter - cpuBefore;
        List<JobResult> results = jobs.stream().map(FioJob::result).toList();
        FioReport.GuestInfo guest = new FioReport.GuestInfo(disk, capacity, vcpus, machine.numQueues(),
                config.exitLatencyNs(), config.injectLatencyNs(), config.kickPolicy(), run.notifies(),
                run.interrupts(), cpu, runNanos);
        return new FioReport(results, specs, guest, time);
    }

    /** Ramp plus runtime plus a minute of slack when every job is bounded in time and does not verify. */
    static Duration timeout(List<JobSpec> specs) {
        long longest = 0;
        for (JobSpec s : specs) {
            if (s.runtimeNanos() == 0 || s.verify() != VerifyKind.NONE) {
                return UNBOUNDED_RUN;
            }
            longest = Math.max(longest, s.rampNanos() + s.runtimeNanos());
        }
        return Duration.ofNanos(longest).plusMinutes(1);
    }
}
