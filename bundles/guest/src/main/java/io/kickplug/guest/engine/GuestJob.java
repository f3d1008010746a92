package io.kickplug.guest.engine;

/**
 * A workload run cooperatively by one vCPU thread. The vCPU calls {@link #start} once, then {@link #step}
 * whenever the job may make progress (first right after start, then after every batch of completions it
 * handled), and {@link #finish} once after {@code step} returned false and the job has nothing in flight.
 * A job never blocks: it submits what it can, commits, and returns; the vCPU parks until an interrupt.
 * An exception from any method fails the run.
 */
public interface GuestJob {

    /** Allocates buffers and prepares state; may submit (then commit). */
    void start(Vcpu v);

    /**
     * Submits what the job can submit now, ends with {@link Vcpu#commit()} when it submitted anything, and
     * returns false when it is finished (it will submit nothing more; its in-flight I/O still completes).
     */
    boolean step(Vcpu v);

    /** Called once, when the job finished and none of its I/O is in flight. */
    void finish(Vcpu v);
}
