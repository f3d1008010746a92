package io.kickplug.api.virtio;

/** Device-independent feature bits (VIRTIO 1.2 section 6), as masks. */
public interface VirtioFeatures {
    /** Legacy: notify when the avail ring is empty (section 6, legacy interface only). */
    long NOTIFY_ON_EMPTY = 1L << 24;
    long ANY_LAYOUT = 1L << 27;
    /** Section 2.7.5.3. */
    long RING_INDIRECT_DESC = 1L << 28;
    /** Sections 2.7.7 and 2.7.10: used_event / avail_event. */
    long RING_EVENT_IDX = 1L << 29;
    /** Section 6: a device without the legacy interface MUST offer it and a driver MUST accept it. */
    long VERSION_1 = 1L << 32;
    long ACCESS_PLATFORM = 1L << 33;
    long RING_PACKED = 1L << 34;
    long IN_ORDER = 1L << 35;
    long ORDER_PLATFORM = 1L << 36;
    long SR_IOV = 1L << 37;
    long NOTIFICATION_DATA = 1L << 38;
    long RING_RESET = 1L << 40;
}
