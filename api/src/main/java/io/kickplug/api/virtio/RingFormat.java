package io.kickplug.api.virtio;

import io.kickplug.api.text.Labels;

/**
 * The two virtqueue formats of VIRTIO 1.2: split (section 2.7) and packed (section 2.8, feature
 * VIRTIO_F_RING_PACKED). Each is served by its own bundle behind {@link VirtqueueFactory}; the negotiated
 * features choose one per device ({@link #of}).
 *
 * <p>Both use the three addresses a transport carries for a queue ({@link QueueLayout}): for a packed ring the
 * descriptor ring is at {@link QueueLayout#descTable()}, the driver event suppression structure at
 * {@link QueueLayout#availRing()} (driver area) and the device event suppression structure at
 * {@link QueueLayout#usedRing()} (device area).
 */
public enum RingFormat {
    /** Section 2.7: descriptor table, available ring, used ring. */
    SPLIT,
    /** Section 2.8: one descriptor ring written by both sides, two 4-byte event suppression structures. */
    PACKED;

    /** The feature bit that selects this format (0 for split, which needs none). */
    public long feature() {
        return this == SPLIT ? 0 : VirtioFeatures.RING_PACKED;
    }

    /** The format that {@code features} select: packed when VIRTIO_F_RING_PACKED (bit 34) is among them. */
    public static RingFormat of(long features) {
        return (features & VirtioFeatures.RING_PACKED) != 0 ? PACKED : SPLIT;
    }

    /** The name used by commands and configurations: {@code split} or {@code packed}. */
    public String id() {
        return Labels.of(this);
    }

    /**
     * Parses {@code split} or {@code packed} (any case).
     *
     * @throws IllegalArgumentException for anything else
     */
    public static RingFormat parse(String text) {
        return Labels.parse(RingFormat.class, RingFormat::id, text, "ring format");
    }

    /**
     * Whether {@code size} is a queue size of this format: split needs a power of two up to 32768
     * (section 2.7), packed any size from 1 to 32768 (section 2.8: up to 2^15 entries).
     */
    public boolean isValidSize(int size) {
        return this == SPLIT ? QueueLayout.isValidSize(size) : size >= 1 && size <= QueueLayout.MAX_SIZE;
    }

    /**
     * The index a device view starts from after a reset ({@link VirtqueueFactory#createDeviceQueue}'s
     * {@code nextAvail} and {@code nextUsed}): 0 for split; for packed position 0 with wrap counter 1 in bit 15
     * (section 2.8.1: both wrap counters start at 1), 0x8000, the value vhost-user front-ends send for a fresh ring.
     */
    public int initialIndex() {
        return this == SPLIT ? 0 : 0x8000;
    }

    /** Bytes of the packed descriptor ring: 16 per entry (section 2.8.13). */
    private static long packedRingBytes(int size) {
        return 16L * size;
    }

    /** Bytes one event suppression structure takes: le16 desc (offset and wrap), le16 flags (section 2.8.14). */
    public static final int EVENT_SUPPRESSION_BYTES = 4;

    /** A contiguous layout of this format at {@code base} (16-byte aligned), each part aligned as required. */
    public QueueLayout layout(int size, long base) {
        if (this == SPLIT) {
            return QueueLayout.contiguous(size, base);
        }
        // Section 2.8.10.1: the descriptor ring 16-byte aligned, each event suppression structure 4.
        long driver = base + packedRingBytes(size);
        return new QueueLayout(size, base, driver, driver + EVENT_SUPPRESSION_BYTES);
    }

    /** Bytes {@link #layout} needs. */
    public long bytes(int size) {
        return this == SPLIT ? QueueLayout.contiguousBytes(size) : packedRingBytes(size) + 2L * EVENT_SUPPRESSION_BYTES;
    }
}
