package io.kickplug.virtio.packed;

import static io.kickplug.virtio.packed.PackedRing.*;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.virtio.chain.DriverQueueBase;
import java.util.List;

/**
 * The driver's view of a packed virtqueue, after Linux's drivers/virtio/virtio_ring.c (packed part): buffer IDs
 * from a free list, descriptors written in ring order, the first descriptor's flags stored last (release),
 * used descriptors taken in ring order whatever the order of their IDs. Not thread-safe: the caller holds its
 * per-queue lock, as Linux holds the vq lock.
 */
public final class PackedDriverQueue extends DriverQueueBase {
    /** The helper classes this queue calls, loaded with it, for the reason SplitDriverQueue gives for its own. */
    @SuppressWarnings("unused")
    private static final Class<?>[] LOADED_WITH_THIS = {PackedRing.class, PackedDeviceQueue.class};

    private final long ring;
    /** Driver event suppression structure (ours: used-buffer notifications). */
    private final long driverEvent;
    /** Device event suppression structure (the device's: available-buffer notifications). */
    private final long deviceEvent;

    /** Position and avail wrap counter of the next descriptor to write (section 2.8.1). */
    private int nextAvail;
    /** Position and used wrap counter of the next used descriptor to look at. */
    private int lastUsed;
    /** Free buffer IDs, a list threaded through {@link #nextFreeId}. */
    private int freeId;
    private final int[] nextFreeId;
    /** Per buffer ID: ring descriptors it holds (1 for an indirect chain), 0 when free. */
    private final int[] descriptors;
    /** The driver event suppression flags last written (Linux's event_flags_shadow). */
    private int eventFlagsShadow;

    public PackedDriverQueue(GuestMemory memory, QueueLayout layout, long features, long indirectArea,
            int maxIndirect) {
        super(memory, checkedSize(layout), features, indirectArea, maxIndirect);
        this.ring = layout.descTable();
        this.driverEvent = layout.availRing();
        this.deviceEvent = layout.usedRing();
        this.nextFreeId = new int[size];
        this.descriptors = new int[size];
        resumeAt(encode(0, true));
    }

    private static QueueLayout checkedSize(QueueLayout layout) {
        if (!RingFormat.PACKED.isValidSize(layout.size())) {
            throw new IllegalArgumentException("packed queue size must be from 1 to 32768: " + layout.size());
        }
        return layout;
    }

    /**
     * Starts the fresh ring at position-with-wrap {@code encoded} (bit 15 the wrap counter) on both sides, as if
     * that many descriptors had gone round: every descriptor looks used in the lap before the one in which it
     * is visited next, so the device sees none available and the driver none used. For tests of the wrap and
     * for restoring a ring; call before the first {@link #add} and before the device starts (the device view
     * then starts at the same value).
     */
    public void resumeAt(int encoded) {
        if (inFlight != 0) {
            throw new IllegalStateException("resumeAt on a queue with chains in flight");
        }
        int pos = position(encoded);
        if (pos >= size) {
            throw new IllegalArgumentException("position " + pos + " outside a ring of " + size);
        }
        boolean wrap = wrap(encoded);
        memory.fill(ring, (long) DESC_SIZE * size, (byte) 0);
        memory.fill(driverEvent, RingFormat.EVENT_SUPPRESSION_BYTES, (byte) 0);
        memory.fill(deviceEvent, RingFormat.EVENT_SUPPRESSION_BYTES, (byte) 0);
        // Positions from pos on come next in this lap: used in the previous one. Those before pos come in the
        // next lap: used in this one. (For the initial state, position 0 with wrap 1, that is all zeroes.)
        for (int i = 0; i < size; i++) {
            int flags = usedFlags(i < pos ? wrap : !wrap);
            if (flags != 0) {
                memory.writeU16(PackedRing.flags(ring, i), (short) flags);
            }
        }
        nextAvail = encode(pos, wrap);
        lastUsed = nextAvail;
        numFree = size;
        numAdded = 0;
        for (int i = 0; i < size; i++) {
            nextFreeId[i] = i + 1;
            descriptors[i] = 0;
            tokens[i] = null;
        }
        freeId = 0;
        eventFlagsShadow = RING_EVENT_FLAGS_ENABLE;
    }

    private void writeDesc(long table, int pos, long addr, int len, int id) {
        memory.writeU64(PackedRing.addr(table, pos), addr);
        memory.writeU32(PackedRing.len(table, pos), len);
        memory.writeU16(PackedRing.id(table, pos), (short) id);
    }

    @Override
    public boolean add(List<BufferSpec> buffers, boolean indirect, Object token) {
        int n = buffers.size();
        boolean useIndirect = checkChain(buffers, token, indirect, "2.8.17");
        int needed = useIndirect ? 1 : n;
        if (numFree < needed || freeId >= size) {
            return false;
        }
        int id = freeId;
        int head = nextAvail;
        int headFlags;
        if (useIndirect) {
            long table = indirectArea + (long) id * maxIndirect * DESC_SIZE;
            for (int k = 0; k < n; k++) {
                BufferSpec b = buffers.get(k);
                // Section 2.8.19: inside an indirect table no flag but WRITE.
                writeDesc(table, k, b.address(), b.length(), 0);
                memory.writeU16(PackedRing.flags(table, k), (short) (b.deviceWritable() ? DESC_F_WRITE : 0));
            }
            writeDesc(ring, position(head), table, n * DESC_SIZE, id);
            headFlags = DESC_F_INDIRECT | availFlags(wrap(head));
        } else {
            int at = head;
            headFlags = 0;
            for (int k = 0; k < n; k++) {
                BufferSpec b = buffers.get(k);
                // Linux writes the ID into every descriptor; the device reads the last one's (section 2.8.6).
                writeDesc(ring, position(at), b.address(), b.length(), id);
                int flags = (b.deviceWritable() ? DESC_F_WRITE : 0) | (k < n - 1 ? DESC_F_NEXT : 0)
                        | availFlags(wrap(at));
                if (k == 0) {
                    headFlags = flags;
                } else {
                    // Plain store: published by the head's release store below.
                    memory.writeU16(PackedRing.flags(ring, position(at)), (short) flags);
                }
                at = advance(at, 1, size);
            }
        }
        nextAvail = advance(head, needed, size);
        numFree -= needed;
        freeId = nextFreeId[id];
        descriptors[id] = needed;
        tokens[id] = token;
        inFlight++;
        numAdded += needed;
        // Release: every other descriptor of the chain, and the head's address, length and ID, are visible before
        // the head's flags make the chain available (section 2.8.21.2: a write barrier before the first flags).
        // Pairs with PackedDeviceQueue's acquire load of the head flags.
        memory.writeU16Release(PackedRing.flags(ring, position(head)), (short) headFlags);
        return true;
    }

    @Override
    public boolean kickPrepare() {
        // Full fence: the head-flags store must be ordered before the load of the device's event suppression
        // structure (Linux virtqueue_kick_prepare_packed: virtio_mb), or both sides could wait for each other.
        // Pairs with the device's fence in PackedDeviceQueue.enableNotification.
        memory.fullFence();
        int moved = numAdded;
        numAdded = 0;
        int flags = memory.readU16(eventFlags(deviceEvent)) & 3;
        if (flags == RING_EVENT_FLAGS_DISABLE) {
            return false;
        }
        if (flags == RING_EVENT_FLAGS_DESC && eventIdx) {
            // Section 2.8.10: notify when the descriptors just made available include the one the device named.
            int offWrap = memory.readU16(eventDesc(deviceEvent)) & 0xffff;
            return needEvent(offWrap, nextAvail, Math.min(moved, size), size);
        }
        return true; // ENABLE (or DESC without EVENT_IDX, which the device must not write)
    }

    /** Acquire: the ID and length the device wrote before the flags are visible (section 2.8.22). */
    private int readUsedFlagsAcquire() {
        return memory.readU16Acquire(PackedRing.flags(ring, position(lastUsed))) & 0xffff;
    }

    @Override
    public boolean hasUsed() {
        return isUsed(readUsedFlagsAcquire(), wrap(lastUsed));
    }

    @Override
    public UsedBuffer getUsed() {
        if (!hasUsed()) {
            return null;
        }
        int pos = position(lastUsed);
        int id = memory.readU16(PackedRing.id(ring, pos)) & 0xffff;
        int len = memory.readU32(PackedRing.len(ring, pos));
        if (id >= size || tokens[id] == null) {
            throw new IllegalStateException("device returned buffer ID " + id + " that is not in use (queue size "
                    + size + ")");
        }
        Object token = tokens[id];
        lastUsed = advance(lastUsed, descriptors[id], size);
        release(id);
        if (eventIdx && eventFlagsShadow == RING_EVENT_FLAGS_DESC) {
            // Like Linux: keep the event at the descriptor we expect next, so the device notifies for it.
            memory.writeU16(eventDesc(driverEvent), (short) lastUsed);
            memory.fullFence();
        }
        return new UsedBuffer(token, len);
    }

    /**
     * Returns buffer ID {@code id} and its descriptors to the free lists: for a used buffer taken by
     * {@link #getUsed}, and for every chain detached after a reset, where nothing in the ring needs undoing (the ring
     * is initialised again before it is used).
     */
    @Override
    protected void release(int id) {
        numFree += descriptors[id];
        descriptors[id] = 0;
        tokens[id] = null;
        nextFreeId[id] = freeId;
        freeId = id;
        inFlight--;
    }

    @Override
    public void disableCallbacks() {
        if (eventFlagsShadow != RING_EVENT_FLAGS_DISABLE) {
            eventFlagsShadow = RING_EVENT_FLAGS_DISABLE;
            memory.writeU16(eventFlags(driverEvent), (short) RING_EVENT_FLAGS_DISABLE);
        }
    }

    private void enableAt(int offWrap) {
        if (eventIdx) {
            // The position before the flags (Linux: "descs and flags need to be updated in this order").
            memory.writeU16(eventDesc(driverEvent), (short) offWrap);
            eventFlagsShadow = RING_EVENT_FLAGS_DESC;
        } else {
            eventFlagsShadow = RING_EVENT_FLAGS_ENABLE;
        }
        memory.writeU16(eventFlags(driverEvent), (short) eventFlagsShadow);
    }

    @Override
    public boolean enableCallbacks() {
        enableAt(lastUsed);
        // Full fence: publish the re-enable before checking for used descriptors that arrived meanwhile. Pairs
        // with the device's fence in PackedDeviceQueue.needsNotification (used flags store, fence, event read).
        memory.fullFence();
        return !hasUsed();
    }

    @Override
    public boolean enableCallbacksDelayed() {
        // Linux virtqueue_enable_cb_delayed_packed: an event about 3/4 of the outstanding descriptors ahead.
        int bufs = (size - numFree) * 3 / 4;
        enableAt(advance(lastUsed, Math.min(bufs, size - 1), size));
        memory.fullFence();
        return !hasUsed();
    }

    /** The driver event suppression structure's desc field as last written (for tests). */
    public int usedEvent() {
        return memory.readU16(eventDesc(driverEvent)) & 0xffff;
    }
}
