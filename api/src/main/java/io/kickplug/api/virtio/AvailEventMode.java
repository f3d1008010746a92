package io.kickplug.api.virtio;

import io.kickplug.api.text.Labels;

/**
 * When a device publishes {@code avail_event}, the available index after which it wants the next available-buffer
 * notification (VIRTIO 1.2 section 2.7.10, VIRTIO_RING_F_EVENT_IDX; split rings only). Both are spec-correct: the
 * device may publish any index, and the driver notifies when its new index passes it. They differ in how many
 * notifications the driver makes while the device is serving the queue.
 */
public enum AvailEventMode {
    /**
     * When the device re-enables notifications, after a drain found the ring empty: buffers the driver adds while the
     * device drains are found by that drain and cause no notification. Linux vhost's {@code vhost_enable_notify};
     * today's QEMU too, whose {@code virtio_blk_handle_vq} disables notifications while it pops, so that
     * {@code virtqueue_split_pop}'s own avail_event writes are skipped. The default.
     */
    ENABLE,
    /**
     * After every chain the device takes, {@code avail_event} = the next index it will read, while it drains too: the
     * driver's first buffer after the device's last pop notifies. QEMU's {@code virtqueue_split_pop} writes it after
     * every pop while notifications are enabled, and QEMU's virtio-blk handler of 2014 (seed 000's device) popped
     * with them enabled; the drain loop that disables them came later.
     */
    POP;

    /** The name used by commands and configurations: {@code enable} or {@code pop}. */
    public String id() {
        return Labels.of(this);
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
