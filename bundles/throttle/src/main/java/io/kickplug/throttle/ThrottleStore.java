package io.kickplug.throttle;

import java.util.Map;

/**
 * Where a disk's throttle settings outlive the throttle bundle and the runtime: {@code group} and the limits in
 * {@code kp:throttle}'s names ({@code iops-total}, {@code bps-read-max}, ...), as text. The bundle keeps them in
 * the disk's ConfigAdmin configuration ({@link DiskConfigThrottleStore}); tests keep them in a map.
 */
interface ThrottleStore {

    /** Keeps nothing. */
    ThrottleStore NONE = new ThrottleStore() {
        @Override
        public Map<String, String> load(String disk) {
            return Map.of();
        }

        @Override
        public boolean save(String disk, Map<String, String> settings) {
            return false;
        }
    };

    /** The disk's saved settings, empty when it has none (or no configuration). */
    Map<String, String> load(String disk);

    /**
     * Replaces the disk's saved settings with {@code settings} (empty: none).
     *
     * @return false when the disk has no configuration to keep them in
     */
    boolean save(String disk, Map<String, String> settings);
}
