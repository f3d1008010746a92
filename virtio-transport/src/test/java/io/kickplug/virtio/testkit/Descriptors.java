package io.kickplug.virtio.testkit;

import io.kickplug.api.memory.GuestMemory;

/**
 * The 16-byte descriptor of both ring formats: le64 addr, le32 len, then two le16 fields, which the split ring
 * calls flags and next (VIRTIO 1.2 section 2.7.5) and the packed ring id and flags (section 2.8.13).
 */
public final class Descriptors {

    private Descriptors() {
    }

    /** Writes split-ring descriptor {@code index} of the table at {@code table} (section 2.7.5). */
    public static void writeSplit(GuestMemory memory, long table, int index, long addr, int len, int flags,
            int next) {
        long d = writeAddrLen(memory, table, index, addr, len);
        memory.writeU16(d + 12, (short) flags);
        memory.writeU16(d + 14, (short) next);
    }

    /** Writes addr and len of descriptor {@code index} of the table at {@code table}; returns its address. */
    static long writeAddrLen(GuestMemory memory, long table, int index, long addr, int len) {
        long d = table + 16L * index;
        memory.writeU64(d, addr);
        memory.writeU32(d + 8, len);
        return d;
    }
}
