package io.kickplug.guest.engine;

import java.util.List;

/**
 * What {@link GuestMachine#runJobs} measured.
 *
 * @param elapsedNanos wall time from the first start to the last finish
 * @param vcpus one entry per vCPU, by id
 */
public record RunResult(long elapsedNanos, List<VcpuStats> vcpus) {

    public RunResult {
        vcpus = List.copyOf(vcpus);
    }

    public long notifies() {
        return vcpus.stream().mapToLong(VcpuStats::notifies).sum();
    }

    public long interrupts() {
        return vcpus.stream().mapToLong(VcpuStats::interrupts).sum();
    }
}
