package io.kickplug.virtio.packed;

/**
 * Packed-ring constants, field offsets and wrap-counter arithmetic (VIRTIO 1.2 section 2.8).
 *
 * <p>A ring position is {@code 0 <= pos < size}; each time a side's position passes the end of the ring its
 * wrap counter flips (section 2.8.1, both counters start at 1). Where a position and its counter travel as
 * one 16-bit value (event suppression's {@code desc} field, vhost-user's vring base) the counter is bit 15.
 */
public final class PackedRing {
    private PackedRing() {
    }

    /** Descriptor flags (section 2.8.13): the split ring's NEXT, WRITE, INDIRECT plus AVAIL and USED. */
    public static final int DESC_F_NEXT = 1;
    public static final int DESC_F_WRITE = 2;
    public static final int DESC_F_INDIRECT = 4;
    public static final int DESC_F_AVAIL = 1 << 7;
    public static final int DESC_F_USED = 1 << 15;
    public static final int DESC_SIZE = 16;

    /** Event suppression flags (section 2.8.14). */
    public static final int RING_EVENT_FLAGS_ENABLE = 0;
    public static final int RING_EVENT_FLAGS_DISABLE = 1;
    /** Notify at the descriptor named by the structure's {@code desc} field; only with VIRTIO_F_EVENT_IDX. */
    public static final int RING_EVENT_FLAGS_DESC = 2;

    /** Bit 15 of a position-with-wrap value. */
    public static final int WRAP_BIT = 1 << 15;

    // Field offsets of a descriptor (struct pvirtq_desc: le64 addr, le32 len, le16 id, le16 flags).
    static long addr(long ring, int pos) {
        return ring + (long) DESC_SIZE * pos;
    }

    static long len(long ring, int pos) {
        return addr(ring, pos) + 8;
    }

    static long id(long ring, int pos) {
        return addr(ring, pos) + 12;
    }

    static long flags(long ring, int pos) {
        return addr(ring, pos) + 14;
    }

    // Event suppression structure (struct pvirtq_event_suppress: le16 desc, le16 flags).
    static long eventDesc(long area) {
        return area;
    }

    static long eventFlags(long area) {
        return area + 2;
    }

    /** The AVAIL and USED bits a driver sets to make a descriptor available in the lap of {@code wrap}. */
    public static int availFlags(boolean wrap) {
        return wrap ? DESC_F_AVAIL : DESC_F_USED;
    }

    /** The AVAIL and USED bits a device sets to mark a descriptor used in the lap of {@code wrap}. */
    public static int usedFlags(boolean wrap) {
        return wrap ? DESC_F_AVAIL | DESC_F_USED : 0;
    }

    /**
     * Section 2.8.1: a descriptor is available to the device whose avail wrap counter is {@code wrap} when
     * its AVAIL bit equals the counter and its USED bit does not.
     */
    public static boolean isAvailable(int flags, boolean wrap) {
        boolean avail = (flags & DESC_F_AVAIL) != 0;
        boolean used = (flags & DESC_F_USED) != 0;
        return avail == wrap && used != wrap;
    }

    /** Section 2.8.1: a descriptor is used (for a driver whose used wrap counter is {@code wrap}) when both bits equal it. */
    public static boolean isUsed(int flags, boolean wrap) {
        boolean avail = (flags & DESC_F_AVAIL) != 0;
        boolean used = (flags & DESC_F_USED) != 0;
        return avail == used && used == wrap;
    }

    /** {@code pos} and {@code wrap} as one 16-bit value, the counter in bit 15. */
    public static int encode(int pos, boolean wrap) {
        return pos | (wrap ? WRAP_BIT : 0);
    }

    public static int position(int encoded) {
        return encoded & (WRAP_BIT - 1);
    }

    public static boolean wrap(int encoded) {
        return (encoded & WRAP_BIT) != 0;
    }

    /** The position-with-wrap {@code n} descriptors after {@code encoded} in a ring of {@code size} (n &lt;= size). */
    public static int advance(int encoded, int n, int size) {
        int pos = position(encoded) + n;
        boolean wrap = wrap(encoded);
        if (pos >= size) {
            pos -= size;
            wrap = !wrap;
        }
        return encode(pos, wrap);
    }

    /**
     * The packed form of {@code vring_need_event} (section 2.8.10, after Linux's
     * {@code virtqueue_kick_prepare_packed} and QEMU's {@code vring_packed_need_event}): true when the
     * descriptor {@code eventOffWrap} (position and wrap counter, as in the event suppression structure) is
     * among the {@code moved} descriptors just before {@code now} (position and wrap counter of the side that
     * moved). {@code moved} is at most the ring size.
     */
    public static boolean needEvent(int eventOffWrap, int now, int moved, int size) {
        int event = position(eventOffWrap);
        if (wrap(eventOffWrap) != wrap(now)) {
            // The event names a descriptor of the previous lap: measure it from the same origin as now.
            event -= size;
        }
        int newIdx = position(now);
        int oldIdx = newIdx - moved;
        return ((newIdx - event - 1) & 0xffff) < ((newIdx - oldIdx) & 0xffff);
    }
}
