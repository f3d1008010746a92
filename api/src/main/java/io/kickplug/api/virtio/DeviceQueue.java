package io.kickplug.api.virtio;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The device's view of one split virtqueue (VIRTIO 1.2 section 2.7). Not thread-safe: one I/O thread
 * owns a queue at a time.
 *
 * <p>The drain loop that loses no notification is:
 * <pre>
 * do {
 *     queue.disableNotification();
 *     while ((chain = queue.pop()) != null) handle(chain);
 * } while (queue.enableNotification());
 * </pre>
 * Every method that reads the rings may throw {@link GuestFaultException}; after that the queue is broken
 * and returns nothing until reset.
 */
@ProviderType
public interface DeviceQueue {

    int index();

    int size();

    /** Whether VIRTIO_RING_F_EVENT_IDX was negotiated for this queue. */
    boolean eventIdx();

    /**
     * Takes the next available descriptor chain, or returns {@code null} when the available ring holds no
     * new entry. The chain is validated whole before it is returned.
     */
    DescriptorChain pop();

    /**
     * Takes the descriptor chain starting at {@code head} without reading or advancing the available ring,
     * validated like {@link #pop()}; the head is then in flight and must be pushed once. For resubmitting
     * chains a previous device instance took but never used (vhost-user inflight I/O tracking).
     *
     * @throws GuestFaultException when {@code head} is not a descriptor index, is already in flight, or
     *     its chain is malformed
     * @throws UnsupportedOperationException when the implementation cannot resubmit
     */
    default DescriptorChain popHead(int head) {
        throw new UnsupportedOperationException("this queue cannot resubmit descriptor chains");
    }

    /** True when the available ring holds entries not yet popped. */
    boolean hasAvailable();

    /**
     * Puts {@code head} with {@code writtenBytes} into the used ring and publishes the new used index with
     * release ordering (section 2.7.8.2). Each head must be pushed exactly once.
     */
    void pushUsed(int head, int writtenBytes);

    /**
     * Puts {@code head} with {@code writtenBytes} into the used ring like {@link #pushUsed}, but may leave the
     * used index unpublished: it is published (release) by the next {@link #publishUsed()}, {@link #pushUsed}
     * or {@link #needsNotification()}, so a batch of completions publishes it once. The caller must publish
     * before it counts the batch's requests as done. The default publishes at once.
     */
    default void pushUsedBatched(int head, int writtenBytes) {
        pushUsed(head, writtenBytes);
    }

    /**
     * Publishes the used index of entries {@link #pushUsedBatched} left unpublished, with release ordering
     * (section 2.7.8.2); nothing when there are none. The default has nothing to publish.
     */
    default void publishUsed() {
    }

    /**
     * Decides whether the driver wants a used-buffer notification for what was pushed since the last
     * call (section 2.7.7.2): with EVENT_IDX by {@code vring_need_event(used_event, new, old)}, without it
     * by the NO_INTERRUPT flag. Call after a batch of {@link #pushUsed}; a true result must be followed by
     * {@link DeviceSignals#usedBuffer(int)}.
     */
    boolean needsNotification();

    /** Asks the driver not to send available-buffer notifications (section 2.7.10). */
    void disableNotification();

    /**
     * Asks the driver to send available-buffer notifications again, then (after a full fence) re-reads the
     * available index; returns true when entries arrived meanwhile, so the caller must drain again.
     */
    boolean enableNotification();

    /**
     * Sets when this queue publishes {@code avail_event} with EVENT_IDX (section 2.7.10); called before the queue
     * is handed to the thread that serves it. The default ignores it: a ring without that field (packed).
     */
    default void setAvailEventMode(AvailEventMode mode) {
    }

    /** Index of the next available-ring entry the device will take (last_avail_idx). */
    int nextAvail();

    /** The used index the device last published. */
    int nextUsed();

    /** True after a guest fault broke this queue. */
    boolean isBroken();
}
