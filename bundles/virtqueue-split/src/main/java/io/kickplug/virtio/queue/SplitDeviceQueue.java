package io.kickplug.virtio.queue;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.GuestMemoryException;
import io.kickplug.api.virtio.AvailEventMode;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.virtio.chain.PooledChain;
import io.kickplug.virtio.chain.QueueBase;

/**
 * The device's view of a split virtqueue (VIRTIO 1.2 section 2.7), after rust-vmm's virtio-queue and
 * QEMU's hw/virtio/virtio.c. Everything read from guest memory is checked; a violation throws
 * {@link GuestFaultException} naming the section and leaves the queue broken (it returns nothing more
 * until it is recreated at the next DRIVER_OK).
 *
 * <p>Confined to one thread at a time (the I/O thread serving the queue).
 */
public final class SplitDeviceQueue extends QueueBase {

    private final int mask;
    private final long desc;
    private final long avail;
    private final long used;

    /** The avail.idx value last read; entries in [nextAvail, shadowAvail) are known to be published. */
    private int shadowAvail;
    /** Free-running 16-bit used index last stored in used.idx (published). */
    private int publishedUsed;
    /** Used index when the driver was last considered for a notification (EVENT_IDX). */
    private int signalledUsed;
    private boolean signalledUsedValid;
    private int pushedSinceCheck;

    /**
     * Creates the view and validates the queue configuration the driver wrote.
     *
     * @throws GuestFaultException for a size that is not a power of two up to 32768, misaligned ring
     *     parts or ring parts outside guest memory (section 2.7)
     */
    public SplitDeviceQueue(GuestMemory memory, int index, QueueLayout layout, long features) {
        super(memory, index, layout.size(), features);
        // Section 2.7: Queue Size is a power of 2, at most 32768 for split virtqueues.
        if (!QueueLayout.isValidSize(size)) {
            throw new GuestFaultException("2.7", "queue " + index + " size " + size
                    + " is not a power of two from 1 to 32768");
        }
        this.mask = size - 1;
        this.desc = layout.descTable();
        this.avail = layout.availRing();
        this.used = layout.usedRing();
        // Section 2.7, table "Virtqueue Part Alignment": descriptor table 16, available ring 2, used ring 4.
        if ((desc & 15) != 0 || (avail & 1) != 0 || (used & 3) != 0) {
            throw new GuestFaultException("2.7", String.format(
                    "queue %d ring parts misaligned: desc 0x%x (16), avail 0x%x (2), used 0x%x (4)", index, desc,
                    avail, used));
        }
        checkPart("2.7", "descriptor table", desc, QueueLayout.descTableBytes(size));
        checkPart("2.7", "available ring", avail, QueueLayout.availRingBytes(size));
        checkPart("2.7", "used ring", used, QueueLayout.usedRingBytes(size));
        // The device starts at the indices the driver left (0 after a reset; section 2.7.6 / 2.7.8).
        this.nextAvail = 0;
        this.shadowAvail = 0;
        this.nextUsed = 0;
    }

    /**
     * Starts from given ring indices instead of 0 (vhost-user SET_VRING_BASE, or a restart).
     */
    public void setIndices(int nextAvailIdx, int nextUsedIdx) {
        this.nextAvail = nextAvailIdx & 0xffff;
        this.shadowAvail = this.nextAvail;
        this.nextUsed = nextUsedIdx & 0xffff;
        this.publishedUsed = this.nextUsed;
        this.signalledUsedValid = false;
    }

    /**
     * Reads avail.idx with acquire ordering, so the ring entries and descriptors the driver wrote before
     * publishing it are visible to the loads that follow (section 2.7.13.3: the driver publishes the index
     * after a write barrier). Validates it against the queue size.
     */
    private int readAvailIdxAcquire() {
        int idx = memory.readU16Acquire(Ring.availIdx(avail)) & 0xffff;
        // QEMU virtqueue_num_heads: "Guest moved used index from %u to %u": more entries than slots
        // means the driver corrupted its index (section 2.7.6: idx counts entries modulo 2^16).
        if (Ring.distance(nextAvail, idx) > size) {
            throw fault("2.7.6", "available index " + idx + " moved more than the queue size " + size
                    + " past the last seen index " + nextAvail);
        }
        shadowAvail = idx;
        return idx;
    }

    @Override
    public boolean hasAvailable() {
        if (broken) {
            return false;
        }
        if (shadowAvail != nextAvail) {
            return true;
        }
        try {
            return readAvailIdxAcquire() != nextAvail;
        } catch (GuestMemoryException e) {
            throw fault("2.7.6", e.getMessage());
        }
    }

    @Override
    public DescriptorChain pop() {
        if (broken) {
            return null;
        }
        try {
            if (shadowAvail == nextAvail && readAvailIdxAcquire() == nextAvail) {
                return null;
            }
            int head = memory.readU16(Ring.availRing(avail, nextAvail & mask)) & 0xffff;
            // Section 2.7.6: ring entries are descriptor chain heads, indices into the table.
            if (head >= size) {
                throw fault("2.7.6", "available ring entry " + head + " is not a descriptor index (size " + size
                        + ")");
            }
            if (inFlight.get(head)) {
                // The driver made a chain available again while the device still owns it (section 2.7.13:
                // descriptors of an available buffer belong to the device until it is used).
                throw fault("2.7.13", "descriptor " + head + " made available again while in use by the device");
            }
            PooledChain chain = walk(head);
            nextAvail = (nextAvail + 1) & 0xffff;
            inFlight.set(head);
            if (availEventAtPop) {
                // Section 2.7.10 (QEMU's virtqueue_split_pop, with notifications enabled as in its 2014 virtio-blk
                // handler, so also during a drain): the next buffer past this pop is to be notified. A
                // plain store, no fence: it only asks for more notifications than the one enableNotification()
                // arranges (with its full fence) before the device may sleep, so a late store loses none.
                memory.writeU16(Ring.availEvent(used, size), (short) nextAvail);
            }
            return chain;
        } catch (GuestMemoryException e) {
            throw fault("2.7.5", "ring access outside guest memory: " + e.getMessage());
        } catch (GuestFaultException e) {
            broken = true; // a buffer rule PooledChain.add checks
            throw e;
        }
    }

    @Override
    public DescriptorChain popHead(int head) {
        if (broken) {
            throw new GuestFaultException("2.7", "queue " + index + " is broken");
        }
        // Section 2.7.6: a chain head is an index into the descriptor table.
        if (head < 0 || head >= size) {
            throw fault("2.7.6", "resubmitted head " + head + " is not a descriptor index (size " + size + ")");
        }
        if (inFlight.get(head)) {
            throw fault("2.7.13", "resubmitted descriptor " + head + " is already in use by the device");
        }
        try {
            PooledChain chain = walk(head);
            inFlight.set(head);
            return chain;
        } catch (GuestMemoryException e) {
            throw fault("2.7.5", "ring access outside guest memory: " + e.getMessage());
        } catch (GuestFaultException e) {
            broken = true;
            throw e;
        }
    }

    /** Follows a chain from {@code head}, validating every descriptor (sections 2.7.4, 2.7.5, 2.7.5.3). */
    private PooledChain walk(int head) {
        PooledChain chain = chains[head];
        if (chain == null) {
            chain = new PooledChain(memory, index, PooledChain.Rules.SPLIT);
            chains[head] = chain;
        }
        chain.begin();
        long table = desc;
        int tableSize = size;
        boolean indirect = false;
        int i = head;
        int ttl = size;
        while (true) {
            // Loop guard: a chain has at most queue-size descriptors, an indirect table at most its own
            // entries (section 2.7.5.2: no loops, chain no longer than the queue size).
            if (ttl-- == 0) {
                throw fault(indirect ? "2.7.5.3.1" : "2.7.5.2", "descriptor chain from head " + head
                        + " loops or is longer than " + (indirect ? "its indirect table" : "the queue size"));
            }
            long d = table + (long) Ring.DESC_SIZE * i;
            // Two checked loads per descriptor: le64 addr, then le32 len, le16 flags, le16 next as one le64.
            long addr = memory.readU64(d);
            long rest = memory.readU64(d + 8);
            int len = (int) rest;
            int flags = (int) (rest >>> 32) & 0xffff;
            int next = (int) (rest >>> 48);
            if ((flags & Ring.DESC_F_INDIRECT) != 0) {
                if (!indirectAllowed) {
                    throw fault("2.7.5.3.1", "INDIRECT descriptor without VIRTIO_RING_F_INDIRECT_DESC negotiated");
                }
                if (indirect) {
                    throw fault("2.7.5.3.1", "indirect descriptor inside an indirect table");
                }
                if ((flags & Ring.DESC_F_NEXT) != 0) {
                    throw fault("2.7.5.3.1", "descriptor has both INDIRECT and NEXT");
                }
                tableSize = indirectEntries(addr, len, "2.7.5.3.1", "2.7.5.3");
                // Section 2.7.5.3.2: the WRITE flag of the descriptor pointing to the table is ignored.
                table = addr;
                ttl = tableSize;
                indirect = true;
                i = 0;
                continue;
            }
            // Readable before writable (2.7.4.2), inside guest memory (2.7.5), at most 2^32 bytes (2.7.5.2).
            chain.add(addr, len, (flags & Ring.DESC_F_WRITE) != 0, head);
            if ((flags & Ring.DESC_F_NEXT) == 0) {
                break;
            }
            if (next >= tableSize) {
                throw fault(indirect ? "2.7.5.3.1" : "2.7.5.2", "next index " + next + " out of range (table of "
                        + tableSize + ") in chain " + head);
            }
            i = next;
        }
        return chain.finish(head, 1);
    }

    /** The element now, the index at {@link #publishUsed()} (or the next decision): one release store per batch. */
    @Override
    public void pushUsedBatched(int head, int writtenBytes) {
        land(head);
        if (broken) {
            return;
        }
        try {
            long elem = Ring.usedElem(used, nextUsed & mask);
            memory.writeU32(elem, head);
            memory.writeU32(elem + 4, writtenBytes);
            nextUsed = (nextUsed + 1) & 0xffff;
            pushedSinceCheck++;
        } catch (GuestMemoryException e) {
            throw fault("2.7.8", e.getMessage());
        }
    }

    @Override
    public void publishUsed() {
        if (broken || publishedUsed == nextUsed) {
            return;
        }
        try {
            // Release: the elements (id, len) pushed since the last publication are visible before the index
            // that publishes them (2.7.8.2); pairs with the driver's acquire load of used.idx.
            memory.writeU16Release(Ring.usedIdx(used), (short) nextUsed);
            publishedUsed = nextUsed;
        } catch (GuestMemoryException e) {
            throw fault("2.7.8", e.getMessage());
        }
    }

    @Override
    public boolean needsNotification() {
        if (broken || pushedSinceCheck == 0) {
            return false;
        }
        publishUsed(); // a decision is about published entries only
        pushedSinceCheck = 0;
        // Full fence: the used.idx store must be ordered before the load of the driver's suppression
        // field, or the driver may miss the new entry and we may miss its re-enable (section 2.7.7.2).
        // Pairs with the driver's fence between its used_event / flags store and its re-read of used.idx
        // (SplitDriverQueue.enableCallbacks / enableCallbacksDelayed; Linux virtqueue_enable_cb: virtio_mb).
        memory.fullFence();
        if (!eventIdx) {
            // Section 2.7.7.2 without EVENT_IDX: flags == 1 SHOULD NOT notify, flags == 0 MUST notify.
            return (memory.readU16(avail) & Ring.AVAIL_F_NO_INTERRUPT) == 0;
        }
        // Section 2.7.7.2 with EVENT_IDX: notify when the used index passed used_event.
        int usedEvent = memory.readU16(Ring.usedEvent(avail, size)) & 0xffff;
        int old = signalledUsed;
        boolean valid = signalledUsedValid;
        signalledUsed = nextUsed;
        signalledUsedValid = true;
        return !valid || Ring.needEvent(usedEvent, nextUsed, old);
    }

    /** With EVENT_IDX and {@link AvailEventMode#POP}: avail_event follows every pop. I/O thread only. */
    private boolean availEventAtPop;

    @Override
    public void setAvailEventMode(AvailEventMode mode) {
        availEventAtPop = eventIdx && mode == AvailEventMode.POP;
    }

    @Override
    public void disableNotification() {
        if (broken) {
            return;
        }
        try {
            if (!eventIdx) {
                // Section 2.7.10.2: without EVENT_IDX the device sets used.flags to 1 (NO_NOTIFY).
                memory.writeU16(used, (short) Ring.USED_F_NO_NOTIFY);
                return;
            }
            // Section 2.7.10 with EVENT_IDX: the driver notifies when the entries it publishes include avail_event.
            // Leaving the field alone is not enough: after enableNotification() (or a pop in POP mode) it names the
            // driver's next entry, so the next add notified while the I/O thread polled, and that kick, not the
            // poll, found the request. One behind the next entry the device takes is behind everything the driver
            // can publish until its index wraps (2^16 entries later: one notification more at most). A plain
            // store, no fence: a driver that still reads the old value notifies once more, which loses nothing, and
            // enableNotification() publishes the next value with its full fence before the device may sleep.
            memory.writeU16(Ring.availEvent(used, size), (short) (nextAvail - 1));
        } catch (GuestMemoryException e) {
            throw fault("2.7.10", e.getMessage());
        }
    }

    @Override
    public boolean enableNotification() {
        if (broken) {
            return false;
        }
        if (eventIdx) {
            // Section 2.7.10.2: with EVENT_IDX flags stay 0; ask for a notification once the driver passes
            // the entry we will look at next.
            memory.writeU16(Ring.availEvent(used, size), (short) nextAvail);
        } else {
            memory.writeU16(used, (short) 0);
        }
        // Full fence: the store above must be visible before we re-read avail.idx; otherwise a driver
        // that added a buffer just now may have read the old suppression state and not notified.
        // Pairs with the driver's fence between its avail.idx store and its read of avail_event / flags
        // (SplitDriverQueue.kickPrepare; Linux virtqueue_kick_prepare_split: virtio_mb). Section 2.7.10:
        // publish avail_event (or clear NO_NOTIFY), full fence, re-read avail.idx; the caller drains again
        // when this returns true and may sleep only when it returns false.
        memory.fullFence();
        try {
            return readAvailIdxAcquire() != nextAvail;
        } catch (GuestMemoryException e) {
            throw fault("2.7.6", e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "SplitDeviceQueue(" + index + ", size " + size + ", avail " + nextAvail + ", used " + nextUsed
                + (broken ? ", broken" : "") + ")";
    }
}
