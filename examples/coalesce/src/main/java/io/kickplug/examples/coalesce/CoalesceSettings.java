package io.kickplug.examples.coalesce;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One disk's coalescing settings, SPDK vhost's {@code vhost_controller_set_coalescing} parameters.
 *
 * @param delayBaseUs {@code delay_base_us}: the interrupt delay at twice the threshold rate, in microseconds; 0
 *     turns coalescing off (every batch notifies at once, as {@code immediate} does)
 * @param iopsThreshold {@code iops_threshold}: completions per second per queue above which interrupts are delayed
 * @param maxDelayUs the longest delay, in microseconds (SPDK has no cap; here the delay grows with the rate only up
 *     to this, so a completion always reaches the guest within it)
 */
public record CoalesceSettings(long delayBaseUs, long iopsThreshold, long maxDelayUs) {

    /** SPDK's iops_threshold default (SPDK_VHOST_VQ_IOPS_COALESCING_THRESHOLD) and a 50 us delay base. */
    public static final CoalesceSettings DEFAULTS = new CoalesceSettings(50, 60_000, 1_000);

    public CoalesceSettings {
        if (delayBaseUs < 0 || delayBaseUs > 100_000) {
            throw new IllegalArgumentException("delay_base_us " + delayBaseUs + " is out of range 0..100000");
        }
        // SPDK: the rate per stats interval (threshold * 10 ms) must be at least 1
        if (iopsThreshold < 1000 / CoalescingState.STATS_INTERVAL_MS || iopsThreshold > 100_000_000) {
            throw new IllegalArgumentException("iops_threshold " + iopsThreshold + " is out of range "
                    + 1000 / CoalescingState.STATS_INTERVAL_MS + "..100000000");
        }
        if (maxDelayUs < 1 || maxDelayUs > 100_000) {
            throw new IllegalArgumentException("max_delay_us " + maxDelayUs + " is out of range 1..100000");
        }
    }

    /** These settings with {@code key=value} changes: delay_base_us, iops_threshold, max_delay_us. */
    public CoalesceSettings with(Map<String, String> changes) {
        long delay = delayBaseUs;
        long iops = iopsThreshold;
        long max = maxDelayUs;
        for (Map.Entry<String, String> e : changes.entrySet()) {
            long v;
            try {
                v = Long.parseLong(e.getValue().trim());
            } catch (NumberFormatException ex) {
                throw new IllegalArgumentException(e.getKey() + ": not a number: " + e.getValue());
            }
            switch (e.getKey()) {
                case "delay_base_us" -> delay = v;
                case "iops_threshold" -> iops = v;
                case "max_delay_us" -> max = v;
                default -> throw new IllegalArgumentException("unknown setting " + e.getKey()
                        + " (delay_base_us, iops_threshold, max_delay_us)");
            }
        }
        return new CoalesceSettings(delay, iops, max);
    }

    /** As key=value strings (what is kept in the disk's configuration). */
    public Map<String, String> asMap() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("delay_base_us", Long.toString(delayBaseUs));
        m.put("iops_threshold", Long.toString(iopsThreshold));
        m.put("max_delay_us", Long.toString(maxDelayUs));
        return m;
    }

    @Override
    public String toString() {
        return "delay_base_us=" + delayBaseUs + " iops_threshold=" + iopsThreshold + " max_delay_us=" + maxDelayUs;
    }
}
