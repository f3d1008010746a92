package io.kickplug.virtio.chain;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioFeatures;
import java.util.BitSet;

/**
 * What the split and the packed device views share apart from how they read and write their rings: the queue's
 * identity, the negotiated ring features, the fault latch, the two ring positions, the pool of chain objects, the
 * placement check of a ring part and the checks of an indirect table's size.
 */
public abstract class QueueBase implements DeviceQueue {

    /** Bytes of a descriptor, in a split table (section 2.7.5), a packed ring (2.8.13) and an indirect table. */
    private static final int DESC_SIZE = 16;

    protected final GuestMemory memory;
    protected final int index;
    protected final int size;
    protected final boolean eventIdx;
    protected final boolean indirectAllowed;
    /** Set by the first guest fault: the queue then returns nothing until it is recreated. */
    protected boolean broken;
    /** Heads (split) or buffer IDs (packed) popped and not yet pushed. */
    protected final BitSet inFlight;
    /**
     * One chain object per head (split) or buffer ID (packed), made on its first pop and refilled on each later
     * one: no allocation per request. Safe because a head or ID is popped again only after it was pushed (the
     * in-flight checks of sections 2.7.13 and 2.8.21), so a chain is never refilled while its request is in flight.
     */
    protected final PooledChain[] chains;
    /**
     * Where the device takes the next available buffer: split, the free-running 16-bit last_avail_idx (section
     * 2.7.6); packed, the ring position in bits 0-14 and the avail wrap counter in bit 15 (section 2.8.1).
     */
    protected int nextAvail;
    /**
     * Where the next used buffer goes, encoded as {@link #nextAvail} is (split: used index, ahead of the published
     * used.idx within a batch; packed: position and used wrap counter).
     */
    protected int nextUsed;

    protected QueueBase(GuestMemory memory, int index, int size, long features) {
        this.memory = memory;
        this.index = index;
        this.size = size;
        this.eventIdx = (features & VirtioFeatures.RING_EVENT_IDX) != 0;
        this.indirectAllowed = (features & VirtioFeatures.RING_INDIRECT_DESC) != 0;
        // (The subclass checks the size after this constructor: keep a bad one from failing here first.)
        int slots = Math.max(0, Math.min(size, QueueLayout.MAX_SIZE));
        this.inFlight = new BitSet(slots);
        this.chains = new PooledChain[slots];
    }

    /**
     * Starts from given positions instead of the initial ones (vhost-user SET_VRING_BASE, or a restart), encoded
     * as {@link #nextAvail} and {@link #nextUsed} are.
     *
     * @throws GuestFaultException for a position the ring format does not have
     */
    public abstract void setIndices(int nextAvail, int nextUsed);

    /**
     * Ends the flight of {@code head} before its push. A head that is not in flight is a device bug, not a
     * guest fault: every head is pushed exactly once.
     */
    protected final void land(int head) {
        if (head < 0 || head >= size || !inFlight.get(head)) {
            throw new IllegalStateException("queue " + index + ": head " + head + " is not in flight");
        }
        inFlight.clear(head);
    }

    @Override
    public final void pushUsed(int head, int writtenBytes) {
        pushUsedBatched(head, writtenBytes);
        publishUsed();
    }

    /** Refuses a ring part outside guest memory, naming the ring format's {@code section}. */
    protected final void checkPart(String section, String what, long address, long length) {
        if (!memory.isValidRange(address, length)) {
            throw new GuestFaultException(section, String.format("queue %d %s at 0x%x (+%d) is outside guest memory",
                    index, what, address, length));
        }
    }

    /**
     * Entries of the indirect table at {@code table} of {@code len} bytes, checked: a non-zero multiple of the
     * 16-byte descriptor, at most {@link QueueLayout#MAX_SIZE} of them, inside guest memory. A violation breaks
     * the queue; {@code section} names the format's indirect-descriptor rules (2.7.5.3.1, 2.8.19), {@code
     * rangeSection} its indirect table (2.7.5.3, 2.8.7).
     */
    protected final int indirectEntries(long table, int len, String section, String rangeSection) {
        long tableLen = len & 0xffffffffL;
        if (tableLen == 0 || tableLen % DESC_SIZE != 0) {
            throw fault(section, "indirect table length " + tableLen + " is not a non-zero multiple of 16");
        }
        if (tableLen / DESC_SIZE > QueueLayout.MAX_SIZE) {
            throw fault(section, "indirect table of " + tableLen / DESC_SIZE
                    + " descriptors is longer than the device allows (32768)");
        }
        if (!memory.isValidRange(table, tableLen)) {
            throw fault(rangeSection, String.format("indirect table at 0x%x (+%d) is outside guest memory", table,
                    tableLen));
        }
        return (int) (tableLen / DESC_SIZE);
    }

    /** Breaks the queue and returns the fault to throw. */
    protected final GuestFaultException fault(String section, String message) {
        broken = true;
        return new GuestFaultException(section, "queue " + index + ": " + message);
    }

    @Override
    public final int index() {
        return index;
    }

    @Override
    public final int size() {
        return size;
    }

    @Override
    public final int nextAvail() {
        return nextAvail;
    }

    @Override
    public final int nextUsed() {
        return nextUsed;
    }

    @Override
    public final boolean eventIdx() {
        return eventIdx;
    }

    @Override
    public final boolean isBroken() {
        return broken;
    }
}
