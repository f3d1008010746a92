package io.kickplug.guest.engine;

/**
 * What one vCPU did during {@link GuestMachine#runJobs}.
 *
 * @param vcpu the vCPU id
 * @param cpuNanos CPU time of the vCPU thread during the run (thread CPU time, includes the busy-waited
 *     exit and injection costs); -1 when the JVM cannot measure thread CPU time
 * @param exitNanos time spent busy-waiting for notify exits
 * @param injectNanos time spent busy-waiting for interrupt injections
 * @param notifies QueueNotify writes (VM exits) this vCPU made
 * @param interrupts interrupts delivered to this vCPU that found used buffers (each paid the injection cost)
 * @param completions requests whose used buffers this vCPU's completion handler collected
 * @param requests device requests this vCPU submitted (after splitting)
 */
public record VcpuStats(int vcpu, long cpuNanos, long exitNanos, long injectNanos, long notifies, long interrupts,
        long completions, long requests) {
}
