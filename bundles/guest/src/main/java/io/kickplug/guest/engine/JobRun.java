package io.kickplug.guest.engine;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/** A job on its vCPU. */
final class JobRun {
    final GuestJob job;
    int inFlight;
    boolean needsStep = true;
    boolean done;
    boolean finished;

    JobRun(GuestJob job) {
        this.job = job;
    }

    /** One {@link GuestMachine#runJobs} call: the jobs per vCPU and the future of the whole run. */
    static final class Run {
        final List<List<GuestJob>> perVcpu;
        final AtomicInteger unfinished;
        final CompletableFuture<Void> done = new CompletableFuture<>();

        Run(List<List<GuestJob>> perVcpu, int vcpus) {
            this.perVcpu = perVcpu;
            this.unfinished = new AtomicInteger(vcpus);
        }

        void vcpuDone() {
            if (unfinished.decrementAndGet() == 0) {
                done.complete(null);
            }
        }
    }
}
