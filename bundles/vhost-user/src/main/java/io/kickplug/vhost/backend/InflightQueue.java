package io.kickplug.vhost.backend;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtqueueFactory;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A device queue that records what it takes in the vhost-user inflight area (libvhost-user
 * vu_queue_inflight_get / _pre_put / _post_put) and, after a back-end restart, first hands out the chains the
 * previous back-end took and never used, oldest first (vu_check_queue_inflights). Confined to the queue's
 * I/O thread like the queue it wraps.
 *
 * <p>Batches (issue 12): {@link #pushUsedBatched} writes the used element and leaves the head marked in flight;
 * {@link #publishUsed} publishes the ring's used index once (release), then clears the batch's flags and records
 * the used index in the area. A back-end that dies between the two finds the area's used index behind the
 * ring's: {@link #recover} then reads the heads of the published but unrecorded entries from the used ring and
 * clears them, so nothing the driver already got is resubmitted (libvhost-user, which publishes per element,
 * needs only the last head for that).
 */
final class InflightQueue extends ForwardingInflightQueue {

    /** What {@link #recover} found: where the available ring continues and which heads to resubmit. */
    record Recovery(int nextAvail, int usedIdx, List<Integer> resubmit, long nextCounter, boolean fresh) {
    }

    private final ByteBuffer area;
    private long counter;
    /** Heads pushed with their used index not published yet; I/O thread only. */
    private final int[] pending;
    private int pendingCount;

    InflightQueue(DeviceQueue queue, ByteBuffer area, Recovery recovery) {
        super(queue, new ArrayDeque<>(recovery.resubmit()));
        this.pending = new int[queue.size()];
        this.area = area;
        this.counter = recovery.nextCounter();
    }

    /**
     * Reads a queue's area before the queue starts, after libvhost-user's vu_check_queue_inflights: a fresh
     * area (version 0) is initialised and nothing is resubmitted; otherwise a batch whose used index was
     * published but not recorded is finished (its last head is no longer in flight), the in-flight heads are
     * counted, the available ring continues at used index + that count, and the heads are resubmitted in the
     * order they were taken (by counter).
     *
     * @param usedIdx the used ring's index in guest memory
     */
    static Recovery recover(ByteBuffer area, int usedIdx, int queueSize) {
        return recover(area, usedIdx, queueSize, null);
    }

    /**
     * As {@link #recover(ByteBuffer, int, int)}; {@code usedHead} reads the head of the used ring's entry at a
     * used index (modulo the queue size is the caller's): every entry between the area's used index and the
     * ring's was published by a batch the area did not record, and its head is no longer in flight.
     */
    static Recovery recover(ByteBuffer area, int usedIdx, int queueSize, java.util.function.IntUnaryOperator usedHead) {
        if ((area.getShort(InflightRegion.OFF_VERSION) & 0xffff) == 0) {
            area.putShort(InflightRegion.OFF_VERSION, (short) InflightRegion.VERSION);
            area.putShort(InflightRegion.OFF_USED_IDX, (short) usedIdx);
            for (int i = 0; i < queueSize; i++) {
                area.put(desc(i), (byte) 0);
            }
            return new Recovery(usedIdx, usedIdx, List.of(), 0, true);
        }
        int recorded = area.getShort(InflightRegion.OFF_USED_IDX) & 0xffff;
        if (recorded != usedIdx) {
            int last = area.getShort(InflightRegion.OFF_LAST_BATCH_HEAD) & 0xffff;
            if (last < queueSize) {
                area.put(desc(last), (byte) 0);
            }
            int unrecorded = (usedIdx - recorded) & 0xffff;
            if (usedHead != null && unrecorded <= queueSize) {
                for (int i = 0; i < unrecorded; i++) {
                    int head = usedHead.applyAsInt((recorded + i) & 0xffff);
                    if (head >= 0 && head < queueSize) {
                        area.put(desc(head), (byte) 0);
                    }
                }
            }
            VarHandle.storeStoreFence();
            area.putShort(InflightRegion.OFF_USED_IDX, (short) usedIdx);
        }
        List<long[]> found = new ArrayList<>();
        for (int i = 0; i < queueSize; i++) {
            if (area.get(desc(i)) == 1) {
                found.add(new long[] {i, area.getLong(desc(i) + 8)});
            }
        }
        found.sort(Comparator.comparingLong(e -> e[1]));
        List<Integer> heads = new ArrayList<>();
        long next = 0;
        for (long[] e : found) {
            heads.add((int) e[0]);
            next = Math.max(next, e[1] + 1);
        }
        return new Recovery((usedIdx + heads.size()) & 0xffff, usedIdx, List.copyOf(heads), next, false);
    }

    /**
     * Creates queue {@code index}'s device view with inflight tracking in {@code area} (one queue's split area):
     * recovers the area against the used ring in guest memory, logs what it resubmits, and wraps the view that
     * {@code factory} creates at the recovered available index (for a fresh area at {@code nextAvail}).
     */
    static DeviceQueue start(String name, int index, ByteBuffer area, GuestMemory memory, QueueLayout layout,
            long features, int nextAvail, VirtqueueFactory factory, AtomicLong resubmitted) {
        long used = layout.usedRing();
        int usedIdx = memory.readU16(used + 2) & 0xffff;
        int num = layout.size();
        // The head of used entry i: its id, the first 32-bit field of the used element (section 2.7.8).
        Recovery rec = recover(area, usedIdx, num, i -> memory.readU32(used + 4 + 8L * (i % num)));
        System.Logger log = System.getLogger(InflightQueue.class.getName());
        if (!rec.fresh() && rec.nextAvail() != nextAvail) {
            log.log(System.Logger.Level.INFO, "vhost-user " + name + ": queue " + index + " continues at available"
                    + " index " + rec.nextAvail() + " (used " + usedIdx + " + " + rec.resubmit().size()
                    + " in flight) instead of " + nextAvail);
        }
        if (!rec.resubmit().isEmpty()) {
            resubmitted.addAndGet(rec.resubmit().size());
            log.log(System.Logger.Level.INFO, "vhost-user " + name + ": queue " + index + " resubmits "
                    + rec.resubmit().size() + " requests of an earlier back-end: heads " + rec.resubmit());
        }
        int start = rec.fresh() ? nextAvail : rec.nextAvail();
        DeviceQueue q = factory.createDeviceQueue(memory, index, layout, features, start, usedIdx);
        return new InflightQueue(q, area, rec);
    }

    static int desc(int head) {
        return InflightRegion.HEADER + InflightRegion.DESC_STATE * head;
    }

    @Override
    public int size() {
        return queue.size();
    }

    @Override
    public DescriptorChain pop() {
        Integer again = nextResubmit();
        if (again != null) {
            // Its counter and inflight flag are still in the area from the previous back-end.
            return queue.popHead(again);
        }
        DescriptorChain chain = queue.pop();
        if (chain != null) {
            int d = desc(chain.head());
            area.putLong(d + 8, counter++);
            area.put(d, (byte) 1);
        }
        return chain;
    }

    @Override
    public DescriptorChain popHead(int head) {
        DescriptorChain chain = queue.popHead(head);
        int d = desc(head);
        area.putLong(d + 8, counter++);
        area.put(d, (byte) 1);
        return chain;
    }

    @Override
    public boolean hasAvailable() {
        return !resubmit.isEmpty() || queue.hasAvailable();
    }

    @Override
    public void pushUsedBatched(int head, int writtenBytes) {
        area.putShort(InflightRegion.OFF_LAST_BATCH_HEAD, (short) head);
        // Store-store: the area names the head before the used element can carry it (libvhost-user's pre_put).
        VarHandle.storeStoreFence();
        queue.pushUsedBatched(head, writtenBytes);
        pending[pendingCount++] = head;
    }

    @Override
    public void publishUsed() {
        if (pendingCount == 0) {
            return;
        }
        queue.publishUsed(); // the ring's used index, a release store
        // Store-store: the used index is published before any flag is cleared. The release store orders only what
        // precedes it, so without this fence a clear could be made before the index; a back-end killed in
        // between would leave a request the driver never got neither in flight nor used. Pairs with recover(),
        // which a later back-end runs on the same area.
        VarHandle.storeStoreFence();
        for (int i = 0; i < pendingCount; i++) {
            area.put(desc(pending[i]), (byte) 0);
        }
        pendingCount = 0;
        // Store-store: the flags are cleared before the area records the used index that covers them.
        VarHandle.storeStoreFence();
        area.putShort(InflightRegion.OFF_USED_IDX, (short) queue.nextUsed());
    }

    @Override
    public boolean enableNotification() {
        boolean more = queue.enableNotification();
        return more || !resubmit.isEmpty();
    }
}
