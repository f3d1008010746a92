package io.kickplug.virtio.packed;

import static io.kickplug.virtio.packed.PackedRing.*;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.GuestMemoryException;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.virtio.chain.PooledChain;
import io.kickplug.virtio.chain.QueueBase;

/**
 * The device's view of a packed virtqueue (VIRTIO 1.2 section 2.8), after QEMU's hw/virtio/virtio.c (packed
 * part) and the spec's pseudo-code. Everything read from guest memory is checked; a violation throws
 * {@link GuestFaultException} naming the section and leaves the queue broken (it returns nothing more until
 * it is recreated at the next DRIVER_OK).
 *
 * <p>Chains are identified by their buffer ID (section 2.8.13), which {@link DescriptorChain#head()} returns
 * and {@link #pushUsed} takes back; they may be used in any order. Kickplug accepts buffer IDs below the
 * queue size (a driver never has more buffers outstanding than descriptors, and Linux and DPDK number them
 * that way), so that chains can be pooled per ID.
 *
 * <p>Confined to one thread at a time (the I/O thread serving the queue).
 */
public final class PackedDeviceQueue extends QueueBase {

    private final long ring;
    /** Driver event suppression structure: the driver's wishes about used-buffer notifications. */
    private final long driverEvent;
    /** Device event suppression structure: ours about available-buffer notifications. */
    private final long deviceEvent;

    /** First used descriptor of the batch not yet published (its flags not yet stored), or -1. */
    private int batchFirst = -1;
    private int batchFirstFlags;
    /** Descriptors the used position moved since the last notification decision. */
    private int movedSinceCheck;
    private boolean checkedOnce;

    /**
     * Creates the view and validates the queue configuration the driver wrote.
     *
     * @throws GuestFaultException for a size outside 1..32768, misaligned parts or parts outside guest memory
     */
    public PackedDeviceQueue(GuestMemory memory, int index, QueueLayout layout, long features) {
        super(memory, index, layout.size(), features);
        // Section 2.8: packed virtqueues support up to 2^15 entries (no power-of-two rule).
        if (!RingFormat.PACKED.isValidSize(size)) {
            throw new GuestFaultException("2.8", "queue " + index + " size " + size + " is not from 1 to 32768");
        }
        this.ring = layout.descTable();
        this.driverEvent = layout.availRing();
        this.deviceEvent = layout.usedRing();
        // Section 2.8.10.1: descriptor ring 16-byte aligned, each event suppression structure 4-byte aligned.
        if ((ring & 15) != 0 || (driverEvent & 3) != 0 || (deviceEvent & 3) != 0) {
            throw new GuestFaultException("2.8.10.1", String.format(
                    "queue %d ring parts misaligned: descriptors 0x%x (16), driver area 0x%x (4), device area 0x%x (4)",
                    index, ring, driverEvent, deviceEvent));
        }
        checkPart("2.8", "descriptor ring", ring, (long) DESC_SIZE * size);
        checkPart("2.8", "driver event suppression", driverEvent, RingFormat.EVENT_SUPPRESSION_BYTES);
        checkPart("2.8", "device event suppression", deviceEvent, RingFormat.EVENT_SUPPRESSION_BYTES);
        // Section 2.8.1: both wrap counters start at 1, at position 0.
        this.nextAvail = encode(0, true);
        this.nextUsed = nextAvail;
    }

    /**
     * Starts from given positions instead of the initial ones (vhost-user SET_VRING_BASE, or a restart): each
     * is a position in bits 0-14 and its wrap counter in bit 15 (the initial state, position 0 with wrap counter
     * 1, is 0x8000: section 2.8.1).
     *
     * @throws GuestFaultException for a position outside the ring
     */
    public void setIndices(int nextAvailEncoded, int nextUsedEncoded) {
        int a = nextAvailEncoded & 0xffff;
        int u = nextUsedEncoded & 0xffff;
        if (position(a) >= size || position(u) >= size) {
            throw new GuestFaultException("2.8.1", "queue " + index + ": start positions " + position(a) + "/"
                    + position(u) + " outside a ring of " + size);
        }
        nextAvail = a;
        nextUsed = u;
        batchFirst = -1;
        movedSinceCheck = 0;
        checkedOnce = false;
    }

    /**
     * Reads the flags of the descriptor at {@code pos} with acquire ordering: the driver stores a chain's
     * first flags last, after a write barrier (section 2.8.21.2), so the rest of the chain and the descriptor's
     * other fields are visible to the loads that follow. Pairs with PackedDriverQueue's release store of the
     * head flags.
     */
    private int readFlagsAcquire(int pos) {
        return memory.readU16Acquire(flags(ring, pos)) & 0xffff;
    }

    @Override
    public boolean hasAvailable() {
        if (broken) {
            return false;
        }
        try {
            return isAvailable(readFlagsAcquire(position(nextAvail)), wrap(nextAvail));
        } catch (GuestMemoryException e) {
            throw fault("2.8", e.getMessage());
        }
    }

    @Override
    public DescriptorChain pop() {
        if (broken) {
            return null;
        }
        try {
            int headFlags = readFlagsAcquire(position(nextAvail));
            if (!isAvailable(headFlags, wrap(nextAvail))) {
                return null;
            }
            PooledChain chain = walk(headFlags);
            nextAvail = advance(nextAvail, chain.ringDescriptors(), size);
            inFlight.set(chain.head());
            return chain;
        } catch (GuestMemoryException e) {
            throw fault("2.8.4", "ring access outside guest memory: " + e.getMessage());
        } catch (GuestFaultException e) {
            broken = true; // a buffer rule PooledChain.add checks
            throw e;
        }
    }

    /**
     * Reads the chain that starts at {@link #nextAvail} (sections 2.8.6, 2.8.7, 2.8.17, 2.8.19): descriptors
     * linked by NEXT follow each other in the ring (wrapping at its end, where the wrap counter flips) and each
     * must be available in its own lap; the buffer ID is the last descriptor's. A first pass over the flags
     * finds the last descriptor and so the ID (whose pooled chain is then filled); the second reads the buffers.
     */
    private PooledChain walk(int headFlags) {
        int headPos = position(nextAvail);
        int at = nextAvail;
        int flags = headFlags;
        int n = 1;
        while ((flags & DESC_F_NEXT) != 0) {
            if ((flags & DESC_F_INDIRECT) != 0) {
                throw fault("2.8.19", "descriptor " + position(at) + " has both INDIRECT and NEXT");
            }
            // Section 2.8.17: a chain is no longer than the queue (which also rules out going round the ring).
            if (n == size) {
                throw fault("2.8.17", "descriptor chain at " + headPos + " is longer than the queue size " + size);
            }
            at = advance(at, 1, size);
            n++;
            flags = memory.readU16(PackedRing.flags(ring, position(at))) & 0xffff;
            // Sections 2.8.1 and 2.8.21.1: every descriptor of the chain is made available (the AVAIL/USED bits
            // of its own lap) before the first; a wrong wrap bit means it was not written for this lap.
            if (!isAvailable(flags, wrap(at))) {
                throw fault("2.8.1", "descriptor " + position(at) + " of the chain at " + headPos
                        + " is not available in this lap (wrong wrap bit, flags 0x" + Integer.toHexString(flags)
                        + ")");
            }
        }
        int lastPos = position(at);
        int id = memory.readU16(PackedRing.id(ring, lastPos)) & 0xffff;
        if ((flags & DESC_F_INDIRECT) != 0) {
            if (!indirectAllowed) {
                throw fault("2.8.19", "INDIRECT descriptor without VIRTIO_F_INDIRECT_DESC negotiated");
            }
            if (n > 1) {
                // Section 2.8.19: a descriptor with INDIRECT is never part of a list linked by NEXT.
                throw fault("2.8.19", "INDIRECT descriptor inside a chain linked by NEXT at " + headPos);
            }
            PooledChain chain = chainFor(id);
            readIndirect(chain, memory.readU64(PackedRing.addr(ring, lastPos)),
                    memory.readU32(PackedRing.len(ring, lastPos)), id);
            return chain.finish(id, 1);
        }
        PooledChain chain = chainFor(id);
        at = nextAvail;
        for (int k = 0; k < n; k++) {
            int pos = position(at);
            int f = k == 0 ? headFlags : memory.readU16(PackedRing.flags(ring, pos)) & 0xffff;
            // Readable before writable, inside guest memory, at most 2^32 bytes (sections 2.8.17, 2.8.4).
            chain.add(memory.readU64(PackedRing.addr(ring, pos)), memory.readU32(PackedRing.len(ring, pos)),
                    (f & DESC_F_WRITE) != 0, id);
            at = advance(at, 1, size);
        }
        return chain.finish(id, n);
    }

    /** The chain object of buffer ID {@code id}, after checking the ID (sections 2.8.13, 2.8.21). */
    private PooledChain chainFor(int id) {
        if (id >= size) {
            throw fault("2.8.13", "buffer ID " + id + " is out of range (Kickplug numbers buffers below the queue size "
                    + size + ")");
        }
        if (inFlight.get(id)) {
            // The device owns the buffer until it is used (section 2.8.21): the same ID again would make the used
            // descriptor ambiguous.
            throw fault("2.8.21", "buffer ID " + id + " made available again while in use by the device");
        }
        PooledChain chain = chains[id];
        if (chain == null) {
            chain = new PooledChain(memory, index, PooledChain.Rules.PACKED);
            chains[id] = chain;
        }
        chain.begin();
        return chain;
    }

    /** Reads an indirect table (section 2.8.7) into {@code chain}. */
    private void readIndirect(PooledChain chain, long table, int len, int id) {
        int entries = indirectEntries(table, len, "2.8.19", "2.8.7");
        for (int k = 0; k < entries; k++) {
            int flags = memory.readU16(PackedRing.flags(table, k)) & 0xffff;
            if ((flags & DESC_F_INDIRECT) != 0) {
                throw fault("2.8.19", "indirect descriptor inside an indirect table (buffer " + id + ")");
            }
            if ((flags & ~DESC_F_WRITE) != 0) {
                // Section 2.8.19: descriptors in an indirect table carry no flag but WRITE (they follow each other).
                throw fault("2.8.19", "indirect table entry " + k + " of buffer " + id + " has flags 0x"
                        + Integer.toHexString(flags) + " besides WRITE");
            }
            chain.add(memory.readU64(PackedRing.addr(table, k)), memory.readU32(PackedRing.len(table, k)),
                    (flags & DESC_F_WRITE) != 0, id);
        }
    }

    /**
     * Writes the used descriptor (section 2.8.22: buffer ID and written length, AVAIL = USED = used wrap
     * counter) at the next used position and moves it past the chain's descriptors. The flags of the batch's
     * first descriptor are stored last, with release, by {@link #publishUsed()}: the driver reads used
     * descriptors in ring order and stops at the first not yet used, so one release store publishes the batch.
     */
    @Override
    public void pushUsedBatched(int head, int writtenBytes) {
        land(head);
        if (broken) {
            return;
        }
        try {
            int pos = position(nextUsed);
            memory.writeU16(PackedRing.id(ring, pos), (short) head);
            memory.writeU32(PackedRing.len(ring, pos), writtenBytes);
            int flags = usedFlags(wrap(nextUsed));
            if (batchFirst < 0) {
                batchFirst = pos;
                batchFirstFlags = flags;
            } else {
                // Plain store: ordered before the driver can look at it by the release store of the batch's first
                // flags (publishUsed), since the driver never reads past a descriptor that is not used yet.
                memory.writeU16(PackedRing.flags(ring, pos), (short) flags);
            }
            int n = chains[head].ringDescriptors();
            nextUsed = advance(nextUsed, n, size);
            movedSinceCheck = Math.min(size, movedSinceCheck + n);
        } catch (GuestMemoryException e) {
            throw fault("2.8.22", e.getMessage());
        }
    }

    @Override
    public void publishUsed() {
        if (broken || batchFirst < 0) {
            return;
        }
        try {
            // Release: the id and len of every descriptor of the batch, and the flags of the later ones, are
            // visible before the first one's flags that hand them to the driver (section 2.8.22); pairs with
            // PackedDriverQueue.getUsed's acquire load of the flags.
            memory.writeU16Release(PackedRing.flags(ring, batchFirst), (short) batchFirstFlags);
            batchFirst = -1;
        } catch (GuestMemoryException e) {
            throw fault("2.8.22", e.getMessage());
        }
    }

    @Override
    public boolean needsNotification() {
        if (broken || movedSinceCheck == 0) {
            return false;
        }
        publishUsed(); // a decision is about published descriptors only
        int moved = movedSinceCheck;
        boolean first = !checkedOnce;
        movedSinceCheck = 0;
        checkedOnce = true;
        // Full fence: the used flags store must be ordered before the load of the driver's event suppression
        // structure, or the driver may miss the new descriptor and we may miss its re-enable (section 2.8.10).
        // Pairs with the driver's fence between its event suppression store and its re-read of the used flags
        // (PackedDriverQueue.enableCallbacks; Linux virtqueue_enable_cb_prepare_packed / virtqueue_poll: virtio_mb).
        memory.fullFence();
        int flags = memory.readU16(eventFlags(driverEvent)) & 0xffff;
        switch (flags & 3) {
            case RING_EVENT_FLAGS_DISABLE:
                return false; // section 2.8.10: the driver asked for no notification
            case RING_EVENT_FLAGS_DESC:
                if (eventIdx) {
                    int offWrap = memory.readU16(eventDesc(driverEvent)) & 0xffff;
                    return first || needEvent(offWrap, nextUsed, moved, size);
                }
                // DESC is only defined with EVENT_IDX (section 2.8.14); without it, notify (never lose one).
                return true;
            default:
                return true; // ENABLE, or the reserved value 3: notify
        }
    }

    @Override
    public void disableNotification() {
        if (broken) {
            return;
        }
        // Section 2.8.10: the device event suppression structure asks the driver for no notifications.
        memory.writeU16(eventFlags(deviceEvent), (short) RING_EVENT_FLAGS_DISABLE);
    }

    @Override
    public boolean enableNotification() {
        if (broken) {
            return false;
        }
        if (eventIdx) {
            // Section 2.8.10: ask for a notification once the driver makes the descriptor we look at next available.
            memory.writeU16(eventDesc(deviceEvent), (short) nextAvail);
            memory.writeU16(eventFlags(deviceEvent), (short) RING_EVENT_FLAGS_DESC);
        } else {
            memory.writeU16(eventFlags(deviceEvent), (short) RING_EVENT_FLAGS_ENABLE);
        }
        // Full fence: the store above must be visible before we re-read the next descriptor's flags; otherwise a
        // driver that made a buffer available just now may have read the old suppression state and not notified.
        // Pairs with the driver's fence between its head-flags store and its read of our event suppression
        // structure (PackedDriverQueue.kickPrepare; Linux virtqueue_kick_prepare_packed: virtio_mb). The caller
        // drains again when this returns true and may sleep only when it returns false.
        memory.fullFence();
        return hasAvailable();
    }

    @Override
    public String toString() {
        return "PackedDeviceQueue(" + index + ", size " + size + ", avail " + position(nextAvail) + "/"
                + (wrap(nextAvail) ? 1 : 0) + ", used " + position(nextUsed) + "/" + (wrap(nextUsed) ? 1 : 0)
                + (broken ? ", broken" : "") + ")";
    }
}
