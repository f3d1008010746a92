package io.kickplug.guest.engine;

import java.time.Duration;
import java.util.List;

/**
 * A booted simulated guest on one disk: the Linux-style virtio_blk driver (blk-mq, one lock per
 * virtqueue, a kick policy, interrupt-driven completion) and its vCPU threads. Obtain one from
 * {@link GuestEngine#boot}. One {@link #runJobs} at a time.
 */
public interface GuestMachine extends AutoCloseable {

    MachineConfig config();

    /** Capacity in bytes, from the configuration space at boot (VIRTIO 1.2 section 5.2.4). */
    long capacityBytes();

    /** Hardware queues in use (virtqueues set up). */
    int numQueues();

    /** Tags (requests in flight at most) of hardware queue {@code queue}. */
    int queueDepth(int queue);

    /** VIRTIO_BLK_F_RO was negotiated. */
    boolean readOnly();

    /** VIRTIO_BLK_F_FLUSH was negotiated. */
    boolean hasFlush();

    /** Negotiated features. */
    long features();

    /**
     * Runs the jobs: job {@code i} on vCPU {@code i % vcpus}, all vCPUs concurrently, until every job
     * finished and its I/O completed.
     *
     * @return per-vCPU CPU time and counters for this run
     * @throws io.kickplug.guest.driver.GuestDriverException when the driver fails (device needs a reset,
     *     corrupt used ring) or nothing completes for the configured timeout; the machine is unusable then
     * @throws RuntimeException a job's own exception, rethrown; the machine is unusable then
     * @throws IllegalStateException when {@code timeout} passes first (the machine is unusable then)
     */
    RunResult runJobs(List<GuestJob> jobs, Duration timeout);

    /** Stops the vCPUs, resets the device and disconnects interrupts. Idempotent. */
    @Override
    void close();
}
