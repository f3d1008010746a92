package io.kickplug.guest.engine;

import io.kickplug.api.blk.VirtioBlk;

/** One {@link Vcpu#submit} call, split into one or more requests; touched only by the submitting vCPU. */
final class IoRequest {
    final JobRun job;
    final IoCallback callback;
    final VcpuThread owner;
    int partsLeft;
    int status = VirtioBlk.S_OK;

    IoRequest(JobRun job, IoCallback callback, VcpuThread owner, int parts) {
        this.job = job;
        this.callback = callback;
        this.owner = owner;
        this.partsLeft = parts;
    }
}
