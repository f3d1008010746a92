package io.kickplug.virtio.testkit;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;

/**
 * A driver-side mock of a packed virtqueue (VIRTIO 1.2 section 2.8) that writes raw descriptors, flags and event
 * suppression structures with none of the checks a real driver makes: the fixture for hostile-guest tests of
 * the packed ring, as {@link RawRing} is for the split one. Layout: the ring at {@code base}, then a data area.
 * Descriptors are written with {@link #desc} (flags as given, AVAIL/USED bits included) and published with
 * {@link #publish} (the head's flags last, with release), or with {@link #avail} which adds the bits of the
 * current lap.
 */
public final class RawPackedRing {
    public static final int NEXT = 1;
    public static final int WRITE = 2;
    public static final int INDIRECT = 4;
    public static final int AVAIL = 1 << 7;
    public static final int USED = 1 << 15;

    private final GuestMemory memory;
    private final QueueLayout layout;
    /** Next position the mock driver writes, and its wrap counter (section 2.8.1: starts at 1). */
    private int pos;
    private boolean wrap = true;

    public RawPackedRing(GuestMemory memory, int size, long base) {
        this.memory = memory;
        this.layout = RingFormat.PACKED.layout(size, base);
        memory.fill(base, RingFormat.PACKED.bytes(size), (byte) 0);
    }

    public QueueLayout layout() {
        return layout;
    }

    public int size() {
        return layout.size();
    }

    /** First byte after the ring, 4 KiB aligned: where tests put buffers. */
    public long dataArea() {
        return (layout.descTable() + RingFormat.PACKED.bytes(layout.size()) + 4095) & ~4095L;
    }

    /** The AVAIL/USED bits that make a descriptor available in the lap of {@code wrap}. */
    public static int availBits(boolean wrap) {
        return wrap ? AVAIL : USED;
    }

    /** Writes ring descriptor {@code index}, flags exactly as given (stored last, with release). */
    public RawPackedRing desc(int index, long addr, int len, int id, int flags) {
        writeDesc(layout.descTable(), index, addr, len, id, flags);
        return this;
    }

    /** Writes entry {@code index} of an indirect table at {@code table}. */
    public RawPackedRing indirectDesc(long table, int index, long addr, int len, int flags) {
        writeDesc(table, index, addr, len, 0, flags);
        return this;
    }

    private void writeDesc(long table, int index, long addr, int len, int id, int flags) {
        long d = Descriptors.writeAddrLen(memory, table, index, addr, len);
        memory.writeU16(d + 12, (short) id);
        memory.writeU16Release(d + 14, (short) flags);
    }

    /**
     * Appends a chain at the mock driver's position: one descriptor per {@code (addr, len, flags)} triple in
     * {@code descs}, NEXT added to all but the last, the current lap's AVAIL/USED bits on each, the ID on each;
     * the head's flags are stored last. Moves the position (and flips the wrap counter at the ring's end).
     */
    public RawPackedRing avail(int id, long[] addrs, int[] lens, int[] flags) {
        int n = addrs.length;
        int headPos = pos;
        int headFlags = 0;
        for (int k = 0; k < n; k++) {
            int f = flags[k] | (k < n - 1 ? NEXT : 0) | availBits(wrap);
            if (k == 0) {
                headFlags = f;
                long d = layout.descTable() + 16L * pos;
                memory.writeU64(d, addrs[k]);
                memory.writeU32(d + 8, lens[k]);
                memory.writeU16(d + 12, (short) id);
            } else {
                desc(pos, addrs[k], lens[k], id, f);
            }
            if (++pos == layout.size()) {
                pos = 0;
                wrap = !wrap;
            }
        }
        memory.writeU16Release(layout.descTable() + 16L * headPos + 14, (short) headFlags);
        return this;
    }

    /** One readable and one writable buffer under buffer ID {@code id}. */
    public RawPackedRing availPair(int id, long readAddr, int readLen, long writeAddr, int writeLen) {
        return avail(id, new long[] {readAddr, writeAddr}, new int[] {readLen, writeLen}, new int[] {0, WRITE});
    }

    /** One descriptor with {@code flags} (plus this lap's bits) at the mock driver's position. */
    public RawPackedRing availOne(int id, long addr, int len, int flags) {
        return avail(id, new long[] {addr}, new int[] {len}, new int[] {flags});
    }

    /** The mock driver's position and wrap counter, as the device encodes them (bit 15). */
    public int position() {
        return pos | (wrap ? 1 << 15 : 0);
    }

    public int flags(int index) {
        return memory.readU16Acquire(layout.descTable() + 16L * index + 14) & 0xffff;
    }

    public int id(int index) {
        return memory.readU16(layout.descTable() + 16L * index + 12) & 0xffff;
    }

    public int len(int index) {
        return memory.readU32(layout.descTable() + 16L * index + 8);
    }

    /** Writes the driver event suppression structure (section 2.8.14): desc (offset | wrap &lt;&lt; 15), flags. */
    public RawPackedRing driverEvent(int offWrap, int flags) {
        memory.writeU16(layout.availRing(), (short) offWrap);
        memory.writeU16(layout.availRing() + 2, (short) flags);
        return this;
    }

    public int deviceEventFlags() {
        return memory.readU16(layout.usedRing() + 2) & 0xffff;
    }

    public int deviceEventDesc() {
        return memory.readU16(layout.usedRing()) & 0xffff;
    }
}
