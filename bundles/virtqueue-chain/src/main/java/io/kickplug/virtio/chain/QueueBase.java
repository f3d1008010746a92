package io.kickplug.virtio.chain;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.VirtioFeatures;
import java.util.BitSet;

/**
 * What the split and the packed device views share besides chains: the queue's identity, the negotiated ring
 * features, the fault latch and the placement check of a ring part.
 */
public abstract class QueueBase implements DeviceQueue {
    protected final GuestMemory memory;
    protected final int index;
    protected final int size;
    protected final boolean eventIdx;
    protected final boolean indirectAllowed;
    /** Set by the first guest fault: the queue then returns nothing until it is recreated. */
    protected boolean broken;
    /** Heads (split) or buffer IDs (packed) popped and not yet pushed. */
    protected final BitSet inFlight;

    protected QueueBase(GuestMemory memory, int index, int size, long features) {
        this.memory = memory;
        this.index = index;
        this.size = size;
        this.eventIdx = (features & VirtioFeatures.RING_EVENT_IDX) != 0;
        this.indirectAllowed = (features & VirtioFeatures.RING_INDIRECT_DESC) != 0;
        // (The subclass checks the size after this constructor: keep a bad one from failing here first.)
        this.inFlight = new BitSet(Math.max(0, Math.min(size, 32768)));
    }

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
    public final boolean eventIdx() {
        return eventIdx;
    }

    @Override
    public final boolean isBroken() {
        return broken;
    }
}
