package io.kickplug.virtio.queue;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.virtio.chain.DriverQueueBase;
import java.util.List;

/**
 * The driver's view of a split virtqueue, after Linux's drivers/virtio/virtio_ring.c (split part).
 * Not thread-safe: the caller holds its per-queue lock, as Linux holds the vq lock.
 */
public final class SplitDriverQueue extends DriverQueueBase {
    /**
     * The helper classes this queue calls, loaded with it. The guest makes its driver queues in a probe, which copes
     * with a ring bundle update racing with it; a helper first loaded later (reading the used ring of a device that
     * went away, after this bundle's revision was refreshed) could no longer be loaded: NoClassDefFoundError in
     * HotSwapIT's guest recovery with many updates.
     */
    @SuppressWarnings("unused")
    private static final Class<?>[] LOADED_WITH_THIS = {Ring.class};

    private final int mask;
    private final long desc;
    private final long avail;
    private final long used;

    private int freeHead;
    /** Descriptors each head holds (1 for an indirect chain). */
    private final int[] chainLength;
    /** Free-running avail.idx as the driver last published it. */
    private int availIdx;
    private int lastUsed;
    private boolean callbacksDisabled;

    public SplitDriverQueue(GuestMemory memory, QueueLayout layout, long features, long indirectArea,
            int maxIndirect) {
        super(memory, checkedSize(layout), features, indirectArea, maxIndirect);
        this.mask = size - 1;
        this.desc = layout.descTable();
        this.avail = layout.availRing();
        this.used = layout.usedRing();
        this.chainLength = new int[size];
        memory.fill(desc, QueueLayout.descTableBytes(size), (byte) 0);
        memory.fill(avail, QueueLayout.availRingBytes(size), (byte) 0);
        memory.fill(used, QueueLayout.usedRingBytes(size), (byte) 0);
        // Free list threaded through the descriptors' next fields.
        for (int i = 0; i < size - 1; i++) {
            memory.writeU16(descAddr(i) + 14, (short) (i + 1));
        }
        freeHead = 0;
        numFree = size;
    }

    private static QueueLayout checkedSize(QueueLayout layout) {
        if (!QueueLayout.isValidSize(layout.size())) {
            throw new IllegalArgumentException("queue size must be a power of two up to 32768: " + layout.size());
        }
        return layout;
    }

    private long descAddr(int i) {
        return desc + (long) Ring.DESC_SIZE * i;
    }

    /**
     * Makes a fresh queue behave as if {@code index} chains had already gone round: avail.idx, used.idx
     * and the driver's shadows all start at {@code index}. For tests of 16-bit wrap-around and for
     * restoring a ring; call before the first {@link #add} and before the device starts.
     */
    public void resumeAt(int index) {
        if (inFlight != 0) {
            throw new IllegalStateException("resumeAt on a queue with chains in flight");
        }
        availIdx = index & 0xffff;
        lastUsed = availIdx;
        memory.writeU16(Ring.availIdx(avail), (short) availIdx);
        memory.writeU16(Ring.usedIdx(used), (short) availIdx);
    }

    @Override
    public boolean add(List<BufferSpec> buffers, boolean indirect, Object token) {
        int n = buffers.size();
        boolean useIndirect = checkChain(buffers, token, indirect, "2.7.4.2");
        int needed = useIndirect ? 1 : n;
        if (numFree < needed) {
            return false;
        }
        int head = freeHead;
        if (useIndirect) {
            long table = indirectArea + (long) head * maxIndirect * Ring.DESC_SIZE;
            for (int k = 0; k < n; k++) {
                BufferSpec b = buffers.get(k);
                long d = table + (long) Ring.DESC_SIZE * k;
                int flags = (b.deviceWritable() ? Ring.DESC_F_WRITE : 0) | (k < n - 1 ? Ring.DESC_F_NEXT : 0);
                memory.writeU64(d, b.address());
                memory.writeU32(d + 8, b.length());
                memory.writeU16(d + 12, (short) flags);
                memory.writeU16(d + 14, (short) (k + 1));
            }
            long d = descAddr(head);
            int nextFree = memory.readU16(d + 14) & 0xffff;
            memory.writeU64(d, table);
            memory.writeU32(d + 8, n * Ring.DESC_SIZE);
            memory.writeU16(d + 12, (short) Ring.DESC_F_INDIRECT);
            freeHead = nextFree;
        } else {
            int i = head;
            int last = head;
            for (int k = 0; k < n; k++) {
                BufferSpec b = buffers.get(k);
                long d = descAddr(i);
                int nextFree = memory.readU16(d + 14) & 0xffff;
                int flags = (b.deviceWritable() ? Ring.DESC_F_WRITE : 0) | (k < n - 1 ? Ring.DESC_F_NEXT : 0);
                memory.writeU64(d, b.address());
                memory.writeU32(d + 8, b.length());
                memory.writeU16(d + 12, (short) flags);
                last = i;
                i = nextFree;
            }
            // The last descriptor's next field still links to the free list; its NEXT flag is clear.
            freeHead = i;
            assert last >= 0;
        }
        numFree -= needed;
        chainLength[head] = needed;
        tokens[head] = token;
        inFlight++;
        memory.writeU16(Ring.availRing(avail, availIdx & mask), (short) head);
        availIdx = (availIdx + 1) & 0xffff;
        // Release: the descriptors and the ring entry are visible before the index that publishes them
        // (section 2.7.13.3: a write barrier before updating idx).
        memory.writeU16Release(Ring.availIdx(avail), (short) availIdx);
        numAdded++;
        return true;
    }

    @Override
    public boolean kickPrepare() {
        // Full fence: the avail.idx store must be ordered before the load of the device's suppression
        // field (Linux virtqueue_kick_prepare_split: virtio_mb), or both sides could wait for each other.
        // Pairs with the device's fence in SplitDeviceQueue.enableNotification (avail_event store, fence,
        // avail.idx re-read).
        memory.fullFence();
        int newIdx = availIdx;
        int oldIdx = (availIdx - numAdded) & 0xffff;
        numAdded = 0;
        if (eventIdx) {
            // Section 2.7.10: notify when the published index passed avail_event.
            int availEvent = memory.readU16(Ring.availEvent(used, size)) & 0xffff;
            return Ring.needEvent(availEvent, newIdx, oldIdx);
        }
        return (memory.readU16(used) & Ring.USED_F_NO_NOTIFY) == 0;
    }

    @Override
    public boolean hasUsed() {
        return (memory.readU16Acquire(Ring.usedIdx(used)) & 0xffff) != lastUsed;
    }

    @Override
    public UsedBuffer getUsed() {
        // Acquire: the element the device wrote before publishing used.idx is visible (2.7.8.2).
        int usedIdx = memory.readU16Acquire(Ring.usedIdx(used)) & 0xffff;
        if (usedIdx == lastUsed) {
            return null;
        }
        long elem = Ring.usedElem(used, lastUsed & mask);
        int id = memory.readU32(elem);
        int len = memory.readU32(elem + 4);
        if (id < 0 || id >= size || tokens[id] == null) {
            throw new IllegalStateException("device returned descriptor id " + Integer.toUnsignedString(id)
                    + " that is not in use (queue size " + size + ")");
        }
        Object token = tokens[id];
        release(id);
        lastUsed = (lastUsed + 1) & 0xffff;
        if (eventIdx && !callbacksDisabled) {
            // Like Linux: keep used_event at the entry we expect next, so the device interrupts for it.
            memory.writeU16(Ring.usedEvent(avail, size), (short) lastUsed);
            memory.fullFence();
        }
        return new UsedBuffer(token, len);
    }

    @Override
    protected void release(int head) {
        int n = chainLength[head];
        int last = head;
        for (int k = 1; k < n; k++) {
            last = memory.readU16(descAddr(last) + 14) & 0xffff;
        }
        memory.writeU16(descAddr(last) + 14, (short) freeHead);
        freeHead = head;
        numFree += n;
        tokens[head] = null;
        chainLength[head] = 0;
        inFlight--;
    }

    @Override
    public void disableCallbacks() {
        if (callbacksDisabled) {
            return;
        }
        callbacksDisabled = true;
        if (eventIdx) {
            // As Linux: with EVENT_IDX the flag is not used (section 2.7.7: ignored by the device); move
            // used_event out of the way of the entries we expect next.
            memory.writeU16(Ring.usedEvent(avail, size), (short) ((lastUsed - 1) & 0xffff));
        } else {
            memory.writeU16(avail, (short) Ring.AVAIL_F_NO_INTERRUPT);
        }
    }

    @Override
    public boolean enableCallbacks() {
        callbacksDisabled = false;
        if (eventIdx) {
            memory.writeU16(Ring.usedEvent(avail, size), (short) lastUsed);
        } else {
            memory.writeU16(avail, (short) 0);
        }
        // Full fence: publish the re-enable before checking for entries that arrived meanwhile. Pairs with
        // the device's fence in SplitDeviceQueue.needsNotification (used.idx store, fence, used_event read).
        memory.fullFence();
        return !hasUsed();
    }

    @Override
    public boolean enableCallbacksDelayed() {
        callbacksDisabled = false;
        int pending = Ring.distance(lastUsed, availIdx);
        int bufs = pending * 3 / 4;
        if (eventIdx) {
            memory.writeU16(Ring.usedEvent(avail, size), (short) ((lastUsed + bufs) & 0xffff));
        } else {
            memory.writeU16(avail, (short) 0);
        }
        memory.fullFence();
        int usedIdx = memory.readU16Acquire(Ring.usedIdx(used)) & 0xffff;
        return Ring.distance(lastUsed, usedIdx) <= bufs;
    }

    /**
     * The detached chains' entries stay in the avail ring; rewinding the index un-publishes them (Linux does the
     * same in virtqueue_detach_unused_buf_split, legal only while the device is reset).
     */
    @Override
    protected void detached(int count) {
        availIdx = (availIdx - count) & 0xffff;
        memory.writeU16(Ring.availIdx(avail), (short) availIdx);
    }

    /** used_event as the driver last wrote it (for tests). */
    public int usedEvent() {
        return memory.readU16(Ring.usedEvent(avail, size)) & 0xffff;
    }
}
