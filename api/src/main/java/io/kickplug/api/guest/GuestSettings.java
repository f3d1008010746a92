package io.kickplug.api.guest;

/**
 * The simulated guest's machine settings that {@code kp:guest} shows and changes; a change applies to the
 * next run.
 *
 * @param vcpus vCPU threads
 * @param exitLatencyNs busy-waited cost of one notify (VM exit) on the notifying vCPU
 * @param injectLatencyNs busy-waited cost of one interrupt on the receiving vCPU
 * @param kickPolicy the {@link KickPolicy} name
 * @param pollQueues queues without interrupts that take the high-priority (hipri) requests and are reaped by
 *     polling (Linux virtio_blk's {@code poll_queues}); 0: hipri requests toggle their queue's callbacks off
 *     while in flight
 */
public record GuestSettings(int vcpus, long exitLatencyNs, long injectLatencyNs, String kickPolicy, int pollQueues) {

    /** Without poll queues. */
    public GuestSettings(int vcpus, long exitLatencyNs, long injectLatencyNs, String kickPolicy) {
        this(vcpus, exitLatencyNs, injectLatencyNs, kickPolicy, 0);
    }
}
