package io.kickplug.guest.engine;

/**
 * Completion of one {@link Vcpu#submit} call. Runs on the vCPU thread that submitted the I/O, from its
 * completion handler, with no driver lock held; it may submit more I/O (then {@link Vcpu#commit()} at the
 * end of the job's step, as usual).
 */
@FunctionalInterface
public interface IoCallback {

    /** Status of an I/O the driver failed without a device answer (device reset, DEVICE_NEEDS_RESET). */
    int DRIVER_FAILED = -2;

    /**
     * @param status the device's status byte ({@code VirtioBlk.S_OK}, {@code S_IOERR}, {@code S_UNSUPP}, or
     *     another value a misbehaving device wrote) or {@link #DRIVER_FAILED}; for an I/O the driver split
     *     into several requests, the first non-OK status of its parts
     * @param completedNanos {@link System#nanoTime()} when the handler collected the (last) used buffer
     */
    void done(int status, long completedNanos);
}
