package io.kickplug.api.virtio;

import io.kickplug.api.text.Labels;
import java.util.Locale;

/**
 * When a device publishes {@code avail_event}, the available index after which it wants the next available-buffer
 * notification (VIRTIO 1.2 section 2.7.10, VIRTIO_RING_F_EVENT_IDX; split rings only). Both are spec-correct: the
 * device may publish any index, and the driver notifies when its new index passes it. They differ in how many
 * notifications the driver makes while the device is serving the queue.
 */
public enum AvailEventMode {
    /**
     * When the device re-enables notifications, after a drain found the ring empty (Linux vhost's
     * {@code vhost_enable_notify}): buffers the driver adds while the device drains are found by that drain and
     * cause no notification. The default.
     */
    ENABLE,
    /**
     * After every chain the device takes, {@code avail_event} = the next index it will read (QEMU's
     * {@code virtqueue_split_pop} and libvhost-user's {@code vu_queue_pop}): the driver's first buffer after the
     * device's last pop notifies, even while the device is still draining.
     */
    POP;

    /** The name used by commands and configurations: {@code enable} or {@code pop}. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses {@code enable} or {@code pop} (any case).
     *
     * @throws IllegalArgumentException for anything else
     */
    public static AvailEventMode parse(String text) {
        return Labels.parse(AvailEventMode.class, AvailEventMode::id, text, "avail_event mode");
    }
}
