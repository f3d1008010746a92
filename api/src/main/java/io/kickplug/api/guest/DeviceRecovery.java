package io.kickplug.api.guest;

/**
 * One time a simulated guest saw its device go and come back (hot-unplug, re-probe, resubmission), as
 * Linux's virtio_blk does across a freeze/restore.
 *
 * @param disk the disk's name
 * @param removedAtNanos {@link System#nanoTime} when the device told the guest it was gone (after its reset,
 *     so the quiesce had finished)
 * @param probedAtNanos when the guest had re-initialised the returned device (0 if it never did)
 * @param firstCompletionNanos when the first request completed after the return (0 if none yet)
 * @param collected requests that were in flight at the removal and that the device had completed before it
 *     went (taken from the old used rings, completed once)
 * @param resubmitted requests that were in flight and not completed: submitted again to the returned device
 * @param error why the guest gave up, or {@code null}
 */
public record DeviceRecovery(String disk, long removedAtNanos, long probedAtNanos, long firstCompletionNanos,
        int collected, int resubmitted, String error) {

    /** Nanoseconds from the removal to the first completion after the return, or -1 when there was none. */
    public long pauseNanos() {
        return firstCompletionNanos == 0 ? -1 : firstCompletionNanos - removedAtNanos;
    }
}
