package io.kickplug.api.virtio;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The driver's view of one split virtqueue, after Linux's virtio_ring (section 2.7.13). Not thread-safe:
 * callers hold their own per-queue lock, as the Linux driver does.
 */
@ProviderType
public interface DriverQueue {

    int size();

    QueueLayout layout();

    /** Free descriptors. */
    int freeDescriptors();

    /**
     * Adds one chain: all readable buffers, then all writable ones (section 2.7.5.2), and makes it
     * available by writing the avail ring entry and publishing avail.idx with release ordering.
     *
     * @param buffers the chain's buffers, readable ones first
     * @param indirect put the chain in an indirect table (requires VIRTIO_RING_F_INDIRECT_DESC)
     * @param token returned with the used buffer
     * @return false when there are not enough free descriptors (nothing was added)
     */
    boolean add(List<BufferSpec> buffers, boolean indirect, Object token);

    /**
     * Decides whether the device must be notified about chains added since the last call: with EVENT_IDX
     * by {@code vring_need_event(avail_event, new, old)}, without it by the used ring's NO_NOTIFY flag
     * (section 2.7.10). Issues the full fence that orders the avail.idx store before that load.
     */
    boolean kickPrepare();

    /** Takes the next used buffer, or {@code null} when none is pending (acquire on used.idx). */
    UsedBuffer getUsed();

    /** True when the used ring holds entries not yet taken. */
    boolean hasUsed();

    /** Asks the device not to interrupt (best effort, section 2.7.7). */
    void disableCallbacks();

    /**
     * Re-enables interrupts for the next used buffer; returns false when used buffers are already pending
     * (the caller must process them, as Linux's virtqueue_enable_cb).
     */
    boolean enableCallbacks();

    /**
     * Re-enables interrupts but, with EVENT_IDX, asks for one only after about 3/4 of the outstanding
     * buffers were used (Linux's virtqueue_enable_cb_delayed). Returns false when enough are pending.
     */
    boolean enableCallbacksDelayed();

    /** Number of chains added and not yet returned. */
    int inFlight();

    /** Takes back every chain the device has not used (after a reset) and returns their tokens. */
    List<Object> detachUnused();
}
