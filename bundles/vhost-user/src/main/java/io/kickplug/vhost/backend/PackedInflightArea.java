package io.kickplug.vhost.backend;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One queue's region of the vhost-user inflight area for a packed virtqueue (QEMU docs/interop/vhost-user.rst
 * "Inflight I/O tracking", {@code QueueRegionPacked}; the same structure as DPDK's
 * {@code rte_vhost_inflight_info_packed}), little-endian with C's natural alignment:
 *
 * <pre>
 * QueueRegionPacked {                      DescStatePacked {            (32 bytes)
 *   u64 features;              0             u8  inflight;      0
 *   u16 version;               8             u8  padding;       1
 *   u16 desc_num;             10             u16 next;          2   free list link
 *   u16 free_head;            12             u16 last;          4   head entry: entry of the chain's last descriptor
 *   u16 old_free_head;        14             u16 num;           6   head entry: descriptors in the chain
 *   u16 used_idx;             16             u64 counter;       8   head entry: order in which chains were taken
 *   u16 old_used_idx;         18             u16 id;           16   copy of the ring descriptor: buffer ID,
 *   u8  used_wrap_counter;    20             u16 flags;        18     flags,
 *   u8  old_used_wrap_counter;21             u32 len;          20     length
 *   u8  padding[7];           22             u64 addr;         24     and address
 *   DescStatePacked desc[];   32           }
 * }
 * </pre>
 *
 * The entries form a free list ({@code next}, ending at {@code desc_num}); a chain taken from the ring occupies one
 * entry per descriptor, in free-list order, its head entry carrying {@code inflight}, {@code num}, {@code last} and
 * {@code counter}. The {@code old_*} fields are the last consistent snapshot: an update in progress when the
 * back-end died is committed or rolled back from them ({@link PackedInflightQueue#recover}).
 *
 * <p>Every store goes through {@link #beforeStore}, a hook for the tests that stop a back-end at every step; the
 * production hook is {@code null}.
 */
final class PackedInflightArea {

    // version and desc_num: InflightRegion.OFF_VERSION and OFF_DESC_NUM, as in the split layout.
    static final int OFF_FREE_HEAD = 12;
    static final int OFF_OLD_FREE_HEAD = 14;
    static final int OFF_USED_IDX = 16;
    static final int OFF_OLD_USED_IDX = 18;
    static final int OFF_USED_WRAP = 20;
    static final int OFF_OLD_USED_WRAP = 21;
    static final int HEADER = 32;

    static final int DESC_STATE = 32;
    static final int D_INFLIGHT = 0;
    static final int D_NEXT = 2;
    static final int D_LAST = 4;
    static final int D_NUM = 6;
    static final int D_COUNTER = 8;
    static final int D_ID = 16;
    static final int D_FLAGS = 18;
    static final int D_LEN = 20;
    static final int D_ADDR = 24;

    private final ByteBuffer a;
    private final Runnable beforeStore;

    PackedInflightArea(ByteBuffer area, Runnable beforeStore) {
        this.a = area.order(ByteOrder.LITTLE_ENDIAN);
        this.beforeStore = beforeStore;
    }

    /** Bytes of one queue's region: header and entries, aligned up to 64 (DPDK get_pervq_shm_size_packed). */
    static long queueBytes(int queueSize) {
        return InflightRegion.queueBytes(HEADER, DESC_STATE, queueSize);
    }

    private void store() {
        if (beforeStore != null) {
            beforeStore.run();
        }
    }

    private static int entry(int e) {
        return HEADER + DESC_STATE * e;
    }

    // Header.

    int version() {
        return u16(InflightRegion.OFF_VERSION);
    }

    void version(int v) {
        u16(InflightRegion.OFF_VERSION, v);
    }

    int descNum() {
        return u16(InflightRegion.OFF_DESC_NUM);
    }

    void descNum(int n) {
        u16(InflightRegion.OFF_DESC_NUM, n);
    }

    int u16(int off) {
        return a.getShort(off) & 0xffff;
    }

    void u16(int off, int v) {
        store();
        a.putShort(off, (short) v);
    }

    int u8(int off) {
        return a.get(off) & 0xff;
    }

    void u8(int off, int v) {
        store();
        a.put(off, (byte) v);
    }

    // Entries.

    boolean inflight(int e) {
        return u8(entry(e) + D_INFLIGHT) != 0;
    }

    void inflight(int e, boolean v) {
        u8(entry(e) + D_INFLIGHT, v ? 1 : 0);
    }

    int next(int e) {
        return u16(entry(e) + D_NEXT);
    }

    void next(int e, int v) {
        u16(entry(e) + D_NEXT, v);
    }

    int last(int e) {
        return u16(entry(e) + D_LAST);
    }

    void last(int e, int v) {
        u16(entry(e) + D_LAST, v);
    }

    int num(int e) {
        return u16(entry(e) + D_NUM);
    }

    void num(int e, int v) {
        u16(entry(e) + D_NUM, v);
    }

    long counter(int e) {
        return a.getLong(entry(e) + D_COUNTER);
    }

    void counter(int e, long v) {
        store();
        a.putLong(entry(e) + D_COUNTER, v);
    }

    int id(int e) {
        return u16(entry(e) + D_ID);
    }

    int flags(int e) {
        return u16(entry(e) + D_FLAGS);
    }

    int len(int e) {
        return a.getInt(entry(e) + D_LEN);
    }

    long addr(int e) {
        return a.getLong(entry(e) + D_ADDR);
    }

    /** Copies one ring descriptor into entry {@code e} (vhost-user.rst: addr, len, flags, id of {@code d}). */
    void copy(int e, long addr, int len, int id, int flags) {
        int o = entry(e);
        store();
        a.putLong(o + D_ADDR, addr);
        store();
        a.putInt(o + D_LEN, len);
        store();
        a.putShort(o + D_ID, (short) id);
        store();
        a.putShort(o + D_FLAGS, (short) flags);
    }
}
