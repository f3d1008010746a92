package io.kickplug.vhost.backend;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.GuestFaultException;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * A packed device queue (VIRTIO 1.2 section 2.8) that records what it takes in the vhost-user inflight area's
 * packed queue region ({@link PackedInflightArea}) as QEMU's docs/interop/vhost-user.rst "Inflight I/O tracking"
 * describes it for packed virtqueues (libvhost-user implements only the split layout; DPDK's vhost library the
 * packed one: rte_vhost_set_inflight_desc_packed, _set_last_inflight_io_packed, _clr_inflight_desc_packed), and
 * that a restarted back-end recovers from ({@link #recover}).
 *
 * <p>Taking a chain: its ring descriptors (which the device's used descriptors may overwrite later, section
 * 2.8.22) are copied into entries of the area's free list, the head entry marked in flight with the next counter;
 * {@code old_free_head} moves last, so a back-end that dies half-way leaves the entries free.
 *
 * <p>Using chains ({@link #publishUsed}, once per batch of {@link #pushUsedBatched}): each chain's entries go back
 * to the free list and {@code used_idx} / {@code used_wrap_counter} advance; then the ring's used descriptors are
 * published (the release store of the batch's first flags); then the heads' in-flight flags are cleared; then
 * {@code old_free_head}, {@code old_used_idx} and {@code old_used_wrap_counter} take the new values. A back-end
 * that dies in between leaves {@code used_idx} ahead of {@code old_used_idx}; recovery commits the batch when the
 * ring shows the driver got it, and rolls it back otherwise.
 *
 * <p>Resubmitting: the ring slots between the used position and the available position belong to the device
 * (section 2.8.21: made available, not yet used), and the chains in flight occupy exactly as many descriptors as
 * lie between the two. Recovery writes the in-flight chains back into those slots from the area's copies, in the
 * order they were first taken (counter), as available descriptors of the slots' lap, and the device view starts
 * at the used position: the device takes them again through its usual, fully checked path, then continues with
 * what the driver added meanwhile. The area keeps them in flight under their entries until they are used, so a
 * back-end that dies again before that resubmits them again.
 *
 * <p>Confined to the queue's I/O thread like the queue it wraps (recovery: the message thread, before the queue
 * starts).
 */
final class PackedInflightQueue extends ForwardingInflightQueue {

    // Ring descriptor (struct pvirtq_desc, section 2.8.13): le64 addr, le32 len, le16 id, le16 flags.
    private static final int DESC_SIZE = 16;
    static final int F_NEXT = 1;
    static final int F_WRITE = 2;
    static final int F_INDIRECT = 4;
    static final int F_AVAIL = 1 << 7;
    static final int F_USED = 1 << 15;
    private static final int WRAP = 1 << 15;

    /**
     * What {@link #recover} found: where the device view starts ({@code nextAvail}: at the used position, where the
     * resubmitted chains now are; {@code nextUsed}), which head entries it takes again first, and the available
     * position past them ({@code availAfter}: where the previous back-end had got to in the ring).
     */
    record Recovery(boolean fresh, int nextAvail, int nextUsed, int[] resubmit, long nextCounter, int availAfter) {
        /** Buffer IDs of the resubmitted chains, in the order they are taken again (for the log). */
        List<Integer> ids(PackedInflightArea area) {
            List<Integer> out = new ArrayList<>();
            for (int e : resubmit) {
                out.add(area.id(area.last(e)));
            }
            return out;
        }
    }

    private final PackedInflightArea area;
    private final GuestMemory memory;
    private final long ring;
    private final int size;
    /** Head entry of each buffer ID in flight, -1 when none. */
    private final int[] entryOf;
    private long counter;
    /** Buffer IDs pushed whose used descriptors are not published yet; I/O thread only. */
    private final int[] pending;
    private int pendingCount;

    /** The recovery's head entries go to {@link #resubmit}: the device takes them again first, in order. */
    PackedInflightQueue(DeviceQueue queue, PackedInflightArea area, GuestMemory memory, long ring, Recovery recovery) {
        super(queue, new ArrayDeque<>());
        this.area = area;
        this.memory = memory;
        this.ring = ring;
        this.size = queue.size();
        this.entryOf = new int[size];
        Arrays.fill(entryOf, -1);
        this.pending = new int[size];
        for (int e : recovery.resubmit()) {
            addResubmit(e);
        }
        this.counter = recovery.nextCounter();
    }

    // Positions with the wrap counter in bit 15 (section 2.8.1), as vhost-user carries them.

    static int position(int encoded) {
        return encoded & (WRAP - 1);
    }

    static boolean wrap(int encoded) {
        return (encoded & WRAP) != 0;
    }

    static int encode(int pos, boolean wrap) {
        return pos | (wrap ? WRAP : 0);
    }

    static int advance(int encoded, int n, int size) {
        int pos = position(encoded) + n;
        boolean w = wrap(encoded);
        while (pos >= size) {
            pos -= size;
            w = !w;
        }
        return encode(pos, w);
    }

    /** Descriptors from {@code from} to {@code to} (positions with wrap counters), 1 to {@code size}. */
    static int distance(int from, int to, int size) {
        int d = position(to) - position(from);
        if (wrap(to) != wrap(from)) {
            d += size;
        }
        return d;
    }

    /** Section 2.8.1: the AVAIL and USED bits a driver sets to make a descriptor available in the lap of {@code w}. */
    static int availFlags(boolean w) {
        return w ? F_AVAIL : F_USED;
    }

    /** Section 2.8.1: a descriptor is available in the lap of {@code w} when AVAIL equals it and USED does not. */
    static boolean isAvailable(int flags, boolean w) {
        return ((flags & F_AVAIL) != 0) == w && ((flags & F_USED) != 0) != w;
    }

    private static long descAddr(long ring, int pos) {
        return ring + (long) DESC_SIZE * pos;
    }

    /**
     * Reads a queue's region before the queue starts (vhost-user.rst "When reconnecting", packed). A fresh region
     * (version 0) is initialised at {@code freshUsed} and nothing is resubmitted. Otherwise: an update of the used
     * position in progress ({@code used_idx} differs from {@code old_used_idx}) is rolled back when the ring's
     * descriptor at {@code old_used_idx} is still available in the lap of {@code old_used_wrap_counter} (the batch's
     * first used descriptor was not published) and committed otherwise (the driver got the batch: the descriptor
     * is used, or already available again in the next lap); the entries on the free list are not in flight; the chains in flight are
     * checked, written back into the ring after the used position in counter order, and the device continues at
     * the used position.
     *
     * @param ring guest address of the descriptor ring
     * @param freshUsed used position and wrap counter (SET_VRING_BASE) for a fresh region
     * @throws Refused when the region contradicts itself (a front-end that wrote into it): the queue does not
     *     start rather than resubmit garbage
     */
    static Recovery recover(PackedInflightArea area, int size, GuestMemory memory, long ring, int freshUsed)
            throws Refused {
        if (area.version() == 0) {
            for (int e = 0; e < size; e++) {
                area.inflight(e, false);
                area.next(e, e + 1);
            }
            area.u16(PackedInflightArea.OFF_FREE_HEAD, 0);
            area.u16(PackedInflightArea.OFF_OLD_FREE_HEAD, 0);
            area.u16(PackedInflightArea.OFF_USED_IDX, position(freshUsed));
            area.u16(PackedInflightArea.OFF_OLD_USED_IDX, position(freshUsed));
            area.u8(PackedInflightArea.OFF_USED_WRAP, wrap(freshUsed) ? 1 : 0);
            area.u8(PackedInflightArea.OFF_OLD_USED_WRAP, wrap(freshUsed) ? 1 : 0);
            area.descNum(size);
            // Store-store: the region is whole before its version says it is initialised.
            VarHandle.storeStoreFence();
            area.version(InflightRegion.VERSION);
            return new Recovery(true, freshUsed, freshUsed, new int[0], 0, freshUsed);
        }
        if (area.descNum() < size) {
            throw new Refused("inflight region has " + area.descNum() + " entries for a ring of " + size);
        }
        int usedIdx = area.u16(PackedInflightArea.OFF_USED_IDX);
        int usedWrap = area.u8(PackedInflightArea.OFF_USED_WRAP);
        int oldUsedIdx = area.u16(PackedInflightArea.OFF_OLD_USED_IDX);
        int oldUsedWrap = area.u8(PackedInflightArea.OFF_OLD_USED_WRAP);
        int freeHead = area.u16(PackedInflightArea.OFF_FREE_HEAD);
        int oldFreeHead = area.u16(PackedInflightArea.OFF_OLD_FREE_HEAD);
        if (usedIdx >= size || oldUsedIdx >= size || usedWrap > 1 || oldUsedWrap > 1 || freeHead > size
                || oldFreeHead > size) {
            throw new Refused(String.format("inflight region header out of range: used %d/%d, old used %d/%d, free"
                    + " head %d, old free head %d, ring of %d", usedIdx, usedWrap, oldUsedIdx, oldUsedWrap, freeHead,
                    oldFreeHead, size));
        }
        if (usedIdx != oldUsedIdx || usedWrap != oldUsedWrap) {
            int flags = memory.readU16(descAddr(ring, oldUsedIdx) + 14) & 0xffff;
            if (!isAvailable(flags, oldUsedWrap == 1)) {
                // The batch's used descriptors reached the driver: commit the update in progress.
                area.u16(PackedInflightArea.OFF_OLD_FREE_HEAD, freeHead);
                area.u16(PackedInflightArea.OFF_OLD_USED_IDX, usedIdx);
                area.u8(PackedInflightArea.OFF_OLD_USED_WRAP, usedWrap);
                oldFreeHead = freeHead;
                oldUsedIdx = usedIdx;
                oldUsedWrap = usedWrap;
            }
        }
        // Roll back whatever is still in progress (a batch the driver did not get, a chain half recorded).
        area.u16(PackedInflightArea.OFF_FREE_HEAD, oldFreeHead);
        area.u16(PackedInflightArea.OFF_USED_IDX, oldUsedIdx);
        area.u8(PackedInflightArea.OFF_USED_WRAP, oldUsedWrap);
        boolean[] seen = new boolean[size];
        int steps = 0;
        for (int e = oldFreeHead; e < size; e = area.next(e)) {
            if (seen[e] || ++steps > size) {
                throw new Refused("inflight region's free list runs in a circle at entry " + e);
            }
            seen[e] = true;
            if (area.inflight(e)) {
                area.inflight(e, false); // taken but never recorded whole, or used and recorded as such
            }
        }
        List<Integer> heads = new ArrayList<>();
        long nextCounter = 0;
        int descriptors = 0;
        for (int e = 0; e < size; e++) {
            if (seen[e] || !area.inflight(e)) {
                continue;
            }
            int num = area.num(e);
            if (num < 1 || num > size) {
                throw new Refused("inflight entry " + e + " holds a chain of " + num + " descriptors");
            }
            descriptors += num;
            if (descriptors > size) {
                throw new Refused("inflight chains hold more descriptors than the ring of " + size);
            }
            int at = e;
            for (int k = 0; k < num; k++) {
                if (at >= size || seen[at]) {
                    throw new Refused("inflight chain at entry " + e + " runs into entry " + at
                            + " (outside the area or in use)");
                }
                seen[at] = true;
                if (k < num - 1) {
                    at = area.next(at);
                }
            }
            if (area.last(e) != at) {
                throw new Refused("inflight chain at entry " + e + " ends at entry " + at + ", not at its last "
                        + area.last(e));
            }
            heads.add(e);
            nextCounter = Math.max(nextCounter, area.counter(e) + 1);
        }
        heads.sort(Comparator.comparingLong(area::counter));
        int used = encode(oldUsedIdx, oldUsedWrap == 1);
        int p = used;
        for (int e : heads) {
            p = rewrite(area, e, memory, ring, p, size);
        }
        // The rewritten descriptors are stored before the device view reads them (the activation that follows
        // publishes them to the I/O threads as well).
        VarHandle.storeStoreFence();
        return new Recovery(false, used, used, heads.stream().mapToInt(Integer::intValue).toArray(), nextCounter, p);
    }

    /**
     * Writes the chain of head entry {@code e} into the ring from position {@code p}, available in each slot's
     * lap (section 2.8.1; NEXT on all but the last, section 2.8.6), the head's flags last; returns the position
     * after it.
     */
    private static int rewrite(PackedInflightArea area, int e, GuestMemory memory, long ring, int p, int size) {
        int num = area.num(e);
        int headFlags = 0;
        int at = e;
        int head = p;
        for (int k = 0; k < num; k++) {
            long d = descAddr(ring, position(p));
            memory.writeU64(d, area.addr(at));
            memory.writeU32(d + 8, area.len(at));
            memory.writeU16(d + 12, (short) area.id(at));
            int flags = (area.flags(at) & (F_WRITE | F_INDIRECT)) | (k < num - 1 ? F_NEXT : 0) | availFlags(wrap(p));
            if (k == 0) {
                headFlags = flags;
            } else {
                memory.writeU16(d + 14, (short) flags);
            }
            at = area.next(at);
            p = advance(p, 1, size);
        }
        memory.writeU16Release(descAddr(ring, position(head)) + 14, (short) headFlags);
        return p;
    }

    /**
     * Creates queue {@code index}'s device view with inflight tracking in {@code region} (one queue's packed
     * region of the area): recovers the region, logs what it resubmits, and wraps the view that {@code factory}
     * creates at the recovered positions (for a fresh region at {@code nextAvail} / {@code nextUsed}).
     */
    static DeviceQueue start(String name, int index, java.nio.ByteBuffer region, GuestMemory memory,
            io.kickplug.api.virtio.QueueLayout layout, long features, int nextAvail, int nextUsed,
            io.kickplug.api.virtio.VirtqueueFactory factory, java.util.concurrent.atomic.AtomicLong resubmitted)
            throws Refused {
        PackedInflightArea area = new PackedInflightArea(region, null);
        Recovery rec = recover(area, layout.size(), memory, layout.descTable(), nextUsed);
        System.Logger log = System.getLogger(PackedInflightQueue.class.getName());
        if (!rec.fresh() && rec.availAfter() != (nextAvail & 0xffff)) {
            log.log(System.Logger.Level.INFO, String.format("vhost-user %s: packed queue %d continues at available "
                    + "0x%x (used 0x%x + %d chains in flight) instead of 0x%x", name, index, rec.availAfter(),
                    rec.nextUsed(), rec.resubmit().length, nextAvail & 0xffff));
        }
        if (rec.resubmit().length > 0) {
            resubmitted.addAndGet(rec.resubmit().length);
            log.log(System.Logger.Level.INFO, "vhost-user " + name + ": packed queue " + index + " resubmits "
                    + rec.resubmit().length + " requests of an earlier back-end: buffers " + rec.ids(area));
        }
        log.log(System.Logger.Level.DEBUG, () -> "vhost-user " + name + ": packed queue " + index
                + " tracked in the inflight area (" + (rec.fresh() ? "fresh region" : "recovered region") + ")");
        int avail = rec.fresh() ? nextAvail : rec.nextAvail();
        DeviceQueue q = factory.createDeviceQueue(memory, index, layout, features, avail, rec.nextUsed());
        return new PackedInflightQueue(q, area, memory, layout.descTable(), rec);
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public DescriptorChain pop() {
        int before = queue.nextAvail();
        DescriptorChain chain = queue.pop();
        if (chain == null) {
            return null;
        }
        int id = chain.head();
        int n = distance(before, queue.nextAvail(), size);
        Integer again = nextResubmit();
        if (again != null) {
            // Put back by the recovery: still recorded under its entry, with its first counter.
            if (area.num(again) != n || area.id(area.last(again)) != id) {
                throw new GuestFaultException("2.8", "queue " + index() + ": resubmitted chain " + id + " of " + n
                        + " descriptors does not match inflight entry " + again);
            }
            entryOf[id] = again;
            return chain;
        }
        record(before, n, id);
        return chain;
    }

    /** vhost-user.rst "When receiving available buffers from the driver", packed. */
    private void record(int first, int n, int id) {
        int e = area.u16(PackedInflightArea.OFF_OLD_FREE_HEAD);
        if (e >= size) {
            // The front-end shares the area: it may have written anything into it.
            throw new GuestFaultException("2.8", "queue " + index() + ": the inflight area has no free entry ("
                    + "old_free_head " + e + ")");
        }
        area.num(e, 0);
        area.counter(e, counter++);
        area.inflight(e, true);
        int f = e;
        int p = first;
        for (int k = 0; k < n; k++) {
            if (f >= size) {
                throw new GuestFaultException("2.8", "queue " + index() + ": the inflight area has no free entry");
            }
            long d = descAddr(ring, position(p));
            if (k == n - 1) {
                area.last(e, f);
            }
            area.num(e, k + 1);
            area.copy(f, memory.readU64(d), memory.readU32(d + 8), memory.readU16(d + 12) & 0xffff,
                    memory.readU16(d + 14) & 0xffff);
            f = area.next(f);
            area.u16(PackedInflightArea.OFF_FREE_HEAD, f);
            p = advance(p, 1, size);
        }
        // Store-store: the chain's entries are whole before old_free_head takes them off the free list.
        VarHandle.storeStoreFence();
        area.u16(PackedInflightArea.OFF_OLD_FREE_HEAD, f);
        entryOf[id] = e;
    }

    @Override
    public DescriptorChain popHead(int head) {
        throw new UnsupportedOperationException("a packed ring resubmits through its descriptor ring");
    }

    @Override
    public boolean hasAvailable() {
        return queue.hasAvailable();
    }

    @Override
    public void pushUsedBatched(int head, int writtenBytes) {
        if (head < 0 || head >= size || entryOf[head] < 0) {
            throw new IllegalStateException("queue " + index() + ": buffer " + head + " is not in flight");
        }
        queue.pushUsedBatched(head, writtenBytes);
        pending[pendingCount++] = head;
    }

    /** vhost-user.rst "When supplying used buffers to the driver", packed, for the batch pushed since the last. */
    @Override
    public void publishUsed() {
        if (pendingCount == 0) {
            queue.publishUsed();
            return;
        }
        int freeHead = area.u16(PackedInflightArea.OFF_FREE_HEAD);
        int usedIdx = area.u16(PackedInflightArea.OFF_USED_IDX);
        boolean usedWrap = area.u8(PackedInflightArea.OFF_USED_WRAP) != 0;
        for (int i = 0; i < pendingCount; i++) {
            int e = entryOf[pending[i]];
            int last = area.last(e);
            if (last >= size) {
                throw new GuestFaultException("2.8", "queue " + index() + ": inflight entry " + e + " names entry "
                        + last + " as its last, outside the area");
            }
            area.next(last, freeHead);
            freeHead = e;
            area.u16(PackedInflightArea.OFF_FREE_HEAD, freeHead);
            int used = advance(encode(usedIdx, usedWrap), area.num(e), size);
            usedIdx = position(used);
            usedWrap = wrap(used);
            area.u16(PackedInflightArea.OFF_USED_IDX, usedIdx);
            area.u8(PackedInflightArea.OFF_USED_WRAP, usedWrap ? 1 : 0);
        }
        // Store-store: the area holds the new used position before the driver can see the batch.
        VarHandle.storeStoreFence();
        queue.publishUsed(); // the release store of the batch's first flags (section 2.8.22)
        // Store-store: the heads leave the in-flight set only after the driver can see them used.
        VarHandle.storeStoreFence();
        for (int i = 0; i < pendingCount; i++) {
            int id = pending[i];
            area.inflight(entryOf[id], false);
            entryOf[id] = -1;
        }
        pendingCount = 0;
        // Store-store: the flags are clear before the snapshot that covers them.
        VarHandle.storeStoreFence();
        area.u16(PackedInflightArea.OFF_OLD_FREE_HEAD, freeHead);
        area.u16(PackedInflightArea.OFF_OLD_USED_IDX, usedIdx);
        area.u8(PackedInflightArea.OFF_OLD_USED_WRAP, usedWrap ? 1 : 0);
    }

    @Override
    public boolean enableNotification() {
        return queue.enableNotification();
    }
}
