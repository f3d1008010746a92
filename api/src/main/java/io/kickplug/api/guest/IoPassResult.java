package io.kickplug.api.guest;

/**
 * What a write-then-read-verify pass did.
 *
 * @param requests requests completed (writes plus reads)
 * @param bytes bytes transferred (written plus read)
 * @param elapsedNanos wall time of both phases
 * @param mismatches blocks whose read-back differed from what was written
 * @param interrupts interrupts the guest received
 * @param notifies notifications (QueueNotify writes) the guest sent
 */
public record IoPassResult(String disk, long requests, long bytes, long elapsedNanos, long mismatches,
        long interrupts, long notifies) {

    public double iops() {
        return elapsedNanos == 0 ? 0 : requests * 1e9 / elapsedNanos;
    }

    public double mibPerSecond() {
        return elapsedNanos == 0 ? 0 : bytes * 1e9 / elapsedNanos / (1 << 20);
    }
}
