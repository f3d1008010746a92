package io.kickplug.api.guest;

/**
 * The simulated guest's machine settings that {@code kp:guest} shows and changes; a change applies to the
 * next run.
 *
 * @param vcpus vCPU threads
 * @param exitLatencyNs busy-waited cost of one notify (VM exit) on the notifying vCPU
 * @param injectLatencyNs busy-waited cost of one interrupt on the receiving vCPU
 * @param kickPolicy the {@link KickPolicy} name
 */
public record GuestSettings(int vcpus, long exitLatencyNs, long injectLatencyNs, String kickPolicy) {
}
