package io.kickplug.virtio.testkit;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.QueueLayout;

/**
 * A driver-side mock of a split virtqueue that writes raw descriptors and ring entries, with none of
 * the checks a real driver makes: the fixture for hostile-guest tests, the fuzz test and benchmarks
 * (after rust-vmm's MockSplitQueue). Layout: the rings at {@code base}, then a data area.
 */
public final class RawRing {
    public static final int NEXT = 1;
    public static final int WRITE = 2;
    public static final int INDIRECT = 4;

    private final GuestMemory memory;
    private final QueueLayout layout;
    private int availIdx;

    public RawRing(GuestMemory memory, int size, long base) {
        this.memory = memory;
        this.layout = QueueLayout.contiguous(size, base);
        memory.fill(base, QueueLayout.contiguousBytes(size), (byte) 0);
    }

    public QueueLayout layout() {
        return layout;
    }

    public GuestMemory memory() {
        return memory;
    }

    /** First byte after the rings, 4 KiB aligned: where tests put buffers. */
    public long dataArea() {
        return (layout.descTable() + QueueLayout.contiguousBytes(layout.size()) + 4095) & ~4095L;
    }

    /** Writes descriptor {@code index} of the queue's table. */
    public RawRing desc(int index, long addr, int len, int flags, int next) {
        Descriptors.writeSplit(memory, layout.descTable(), index, addr, len, flags, next);
        return this;
    }

    /** Writes descriptor {@code index} of an indirect table at {@code table}. */
    public RawRing indirectDesc(long table, int index, long addr, int len, int flags, int next) {
        Descriptors.writeSplit(memory, table, index, addr, len, flags, next);
        return this;
    }

    /** Puts {@code head} in the next avail slot and publishes avail.idx (release). */
    public RawRing makeAvailable(int head) {
        memory.writeU16(layout.availRing() + 4 + 2L * (availIdx & (layout.size() - 1)), (short) head);
        availIdx = (availIdx + 1) & 0xffff;
        memory.writeU16Release(layout.availRing() + 2, (short) availIdx);
        return this;
    }

    /** Writes avail.idx directly (to move it arbitrarily). */
    public RawRing setAvailIdx(int idx) {
        availIdx = idx & 0xffff;
        memory.writeU16Release(layout.availRing() + 2, (short) availIdx);
        return this;
    }

    public RawRing setAvailFlags(int flags) {
        memory.writeU16(layout.availRing(), (short) flags);
        return this;
    }

    public RawRing setUsedEvent(int idx) {
        memory.writeU16(layout.availRing() + 4 + 2L * layout.size(), (short) idx);
        return this;
    }

    public int usedIdx() {
        return memory.readU16Acquire(layout.usedRing() + 2) & 0xffff;
    }

    public int usedFlags() {
        return memory.readU16(layout.usedRing()) & 0xffff;
    }

    public int availEvent() {
        return memory.readU16(layout.usedRing() + 4 + 8L * layout.size()) & 0xffff;
    }

    /** id of used element {@code slot}. */
    public int usedId(int slot) {
        return memory.readU32(layout.usedRing() + 4 + 8L * (slot & (layout.size() - 1)));
    }

    public int usedLen(int slot) {
        return memory.readU32(layout.usedRing() + 8 + 8L * (slot & (layout.size() - 1)));
    }
}
