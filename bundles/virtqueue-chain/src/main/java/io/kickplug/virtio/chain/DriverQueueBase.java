package io.kickplug.virtio.chain;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioFeatures;
import java.util.ArrayList;
import java.util.List;

/**
 * What the split and the packed driver views share: the ring's layout in guest memory, the negotiated ring
 * features, the area of indirect tables, each chain's token and the counts the driver keeps (free descriptors,
 * descriptors made available since the last kick check, chains in flight).
 */
public abstract class DriverQueueBase implements DriverQueue {

    /** Bytes of a descriptor in an indirect table, split or packed (sections 2.7.5.3 and 2.8.19). */
    private static final int INDIRECT_DESC_SIZE = 16;

    protected final GuestMemory memory;
    protected final QueueLayout layout;
    protected final int size;
    protected final boolean eventIdx;
    protected final boolean indirectAllowed;
    /** Guest address of the indirect tables: {@link #maxIndirect} descriptors per chain the ring can hold. */
    protected final long indirectArea;
    protected final int maxIndirect;
    /** Per head (split) or buffer ID (packed): the token of the chain that holds it, null when free. */
    protected final Object[] tokens;
    /** Free descriptors of the ring. */
    protected int numFree;
    /** Descriptors (packed) or chains (split) made available since the last kick check. */
    protected int numAdded;
    protected int inFlight;

    /**
     * Takes the ring's features and checks that the indirect tables lie in guest memory; the subclass has checked
     * that {@code layout}'s size suits its ring format.
     */
    protected DriverQueueBase(GuestMemory memory, QueueLayout layout, long features, long indirectArea,
            int maxIndirect) {
        this.memory = memory;
        this.layout = layout;
        this.size = layout.size();
        this.eventIdx = (features & VirtioFeatures.RING_EVENT_IDX) != 0;
        this.indirectAllowed = (features & VirtioFeatures.RING_INDIRECT_DESC) != 0 && indirectArea >= 0
                && maxIndirect > 0;
        this.indirectArea = indirectArea;
        this.maxIndirect = maxIndirect;
        this.tokens = new Object[size];
        if (indirectAllowed) {
            memory.checkRange(indirectArea, (long) size * maxIndirect * INDIRECT_DESC_SIZE);
        }
    }

    /**
     * Checks a chain the driver is about to add and decides whether it goes into an indirect table: the argument
     * rules of {@code DriverQueue.add} that the split and packed views share. A member of this class, not a class of
     * its own: a class first loaded on a ring's first {@code add} could no longer load once the ring bundle's
     * revision is refreshed, and a guest that re-probed a device during a ring bundle update then failed
     * (NoClassDefFoundError in HotSwapIT).
     *
     * @param orderSection the section that puts device-writable buffers after device-readable ones
     * @return true to put the chain in an indirect table
     * @throws IllegalArgumentException for an empty chain, a null token, writable before readable, or an
     *     indirect chain that cannot be one
     */
    protected final boolean checkChain(List<BufferSpec> buffers, Object token, boolean indirect,
            String orderSection) {
        int n = buffers.size();
        if (n == 0) {
            throw new IllegalArgumentException("a chain needs at least one buffer");
        }
        if (token == null) {
            throw new IllegalArgumentException("token must not be null");
        }
        boolean seenWritable = false;
        for (BufferSpec b : buffers) {
            if (b.deviceWritable()) {
                seenWritable = true;
            } else if (seenWritable) {
                throw new IllegalArgumentException("readable buffers must come before writable ones (" + orderSection
                        + ")");
            }
        }
        boolean useIndirect = indirect && indirectAllowed && n > 1 && n <= maxIndirect;
        if (indirect && !useIndirect && (!indirectAllowed || n > maxIndirect)) {
            throw new IllegalArgumentException(!indirectAllowed ? "indirect descriptors were not negotiated"
                    : "chain of " + n + " buffers exceeds the indirect table size " + maxIndirect);
        }
        return useIndirect;
    }

    /** Returns the descriptors of the chain whose head (split) or buffer ID (packed) is {@code id} to the free list. */
    protected abstract void release(int id);

    /** After {@link #detachUnused} released {@code count} chains (maybe none): the ring's own bookkeeping. */
    protected void detached(int count) {
    }

    /**
     * Only after a device reset (the device no longer touches the ring), as Linux's
     * {@code virtqueue_detach_unused_buf_split} and {@code _packed}: releases every chain in flight, in head or
     * buffer ID order.
     */
    @Override
    public final List<Object> detachUnused() {
        List<Object> out = new ArrayList<>();
        for (int id = 0; id < size; id++) {
            if (tokens[id] != null) {
                out.add(tokens[id]);
                release(id);
            }
        }
        detached(out.size());
        return out;
    }

    @Override
    public final int size() {
        return size;
    }

    @Override
    public final QueueLayout layout() {
        return layout;
    }

    @Override
    public final int freeDescriptors() {
        return numFree;
    }

    @Override
    public final int inFlight() {
        return inFlight;
    }
}
