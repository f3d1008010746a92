package io.kickplug.guest.engine;

import java.util.Collection;

/**
 * One simulated vCPU, as a job running on it sees it. Every method is called on the vCPU's own thread
 * (from {@link GuestJob#start}, {@link GuestJob#step}, {@link GuestJob#finish} or an {@link IoCallback}).
 */
public interface Vcpu {

    /** 0 .. vcpus-1. */
    int id();

    /** Hardware queue blk-mq maps this vCPU to: {@code id % numQueues}. */
    int queue();

    /**
     * Allocates guest memory for data, 4096-byte aligned (a guest page), zero-filled.
     *
     * @throws IllegalArgumentException for a size that is not positive
     * @throws IllegalStateException when guest memory is exhausted
     */
    GuestBuffer allocate(int bytes);

    /**
     * Allocates {@code count} buffers of {@code bytes} each ({@link #allocate}) and adds them to {@code into}: a
     * job's buffers, one per request it keeps in flight.
     */
    default void allocateBuffers(int count, int bytes, Collection<? super GuestBuffer> into) {
        for (int i = 0; i < count; i++) {
            into.add(allocate(bytes));
        }
    }

    /**
     * Queues one I/O on this vCPU's hardware queue. The driver splits it as Linux's block layer would (at
     * most seg_max data segments of at most size_max bytes each per request, one segment per 4 KiB guest
     * page, and at most {@code MachineConfig.maxRequestBytes} per request); the callback runs once, after
     * all parts completed, on this thread. Waits (running completions) while the queue has no free tag.
     * Nothing is notified before {@link #commit()}.
     *
     * @param offset byte offset on the disk, a multiple of 512 (0 for FLUSH)
     * @param length bytes, a positive multiple of 512 within {@code buf} (0 and {@code buf == null} for FLUSH)
     * @param hipri a polled (high-priority, REQ_POLLED) I/O: it goes to this vCPU's poll queue if the machine
     *     has poll queues (else to its normal queue, whose callbacks are off while hipri I/O is in flight), and
     *     this vCPU busy-polls the used ring for it instead of waiting for an interrupt
     * @throws IllegalArgumentException for a bad offset or length, a range past the capacity, a write to a
     *     read-only disk, or FLUSH on a device without VIRTIO_BLK_F_FLUSH
     */
    void submit(IoOp op, long offset, int length, GuestBuffer buf, boolean hipri, IoCallback cb);

    /**
     * Ends the submission round (Linux's {@code bd->last} / {@code commit_rqs}): the kick policy decides
     * whether and how the device is notified about the requests added since the last commit.
     */
    void commit();

    /** I/Os submitted from this vCPU and not yet completed (callbacks not yet run). */
    int inFlight();

    /** {@link System#nanoTime()}. */
    long nowNanos();
}
