package io.kickplug.vhost.backend;

import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;

/**
 * Where the three parts of a ring lie: their sizes in the acked format (VIRTIO 1.2 sections 2.7 and 2.8: for a
 * packed ring the descriptor ring and the two 4-byte event suppression structures; SET_VRING_ADDR carries them
 * in the same fields) and their front-end addresses translated through the memory table.
 */
final class RingParts {

    private RingParts() {
    }

    static long descBytes(boolean packed, int size) {
        return packed ? 16L * size : QueueLayout.descTableBytes(size);
    }

    static long availBytes(boolean packed, int size) {
        return packed ? RingFormat.EVENT_SUPPRESSION_BYTES : QueueLayout.availRingBytes(size);
    }

    static long usedBytes(boolean packed, int size) {
        return packed ? RingFormat.EVENT_SUPPRESSION_BYTES : QueueLayout.usedRingBytes(size);
    }

    /**
     * SET_VRING_ADDR's check: refused when a part of ring {@code r} with {@code size} entries at these user
     * addresses lies outside every region of {@code table}.
     */
    static void check(MemoryTable table, boolean packed, Vring r, int size, long desc, long avail, long used)
            throws Refused {
        checkPart(table, r, "descriptor table", desc, descBytes(packed, size));
        checkPart(table, r, packed ? "driver event suppression" : "available ring", avail, availBytes(packed, size));
        checkPart(table, r, packed ? "device event suppression" : "used ring", used, usedBytes(packed, size));
    }

    private static void checkPart(MemoryTable table, Vring r, String what, long uva, long length) throws Refused {
        if (table.translate(uva, length) == -1) {
            throw new Refused(String.format("queue %d %s at user address 0x%x (+%d) lies outside every memory region",
                    r.index, what, uva, length));
        }
    }

    /** The guest-physical layout of ring {@code r} as the front-end set it; refused when a part is not mapped. */
    static QueueLayout locate(MemoryTable table, boolean packed, Vring r) throws Refused {
        long desc = translate(table, r.descUser, "descriptor table", descBytes(packed, r.num));
        long avail = translate(table, r.availUser, "available ring", availBytes(packed, r.num));
        long used = translate(table, r.usedUser, "used ring", usedBytes(packed, r.num));
        return new QueueLayout(r.num, desc, avail, used);
    }

    private static long translate(MemoryTable table, long uva, String what, long length) throws Refused {
        long gpa = table.translate(uva, length);
        if (gpa == -1) {
            throw new Refused(String.format("%s at user address 0x%x (+%d) lies outside every memory region", what,
                    uva, length));
        }
        return gpa;
    }
}
