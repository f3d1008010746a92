package io.kickplug.guest.virtio;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.lock.SpinLock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One request virtqueue of the driver (Linux's {@code vblk->vqs[q]}): the split ring, its lock, and its request
 * slots. Everything that touches the ring runs under {@link #lock()}, except {@link #hasUsed()} (the unlocked
 * more_used check of vring_interrupt, for the queue's only consumer).
 */
public final class RequestQueue {
    final int index;
    final GuestMemory memory;
    /** Where the rings are; new ones when a re-probe swaps the ring format (under the re-probe, no I/O). */
    volatile QueueLayout layout;
    final long indirectArea;
    final int maxIndirect;
    /** Chains of more than one buffer go indirect (VIRTIO_F_INDIRECT_DESC negotiated). */
    private final boolean indirect;
    private final SpinLock lock;
    /** Replaced by a re-probe after a device removal, while nobody else touches the queue. */
    volatile DriverQueue ring;
    final List<RequestSlot> all = new ArrayList<>();
    private final ConcurrentLinkedQueue<RequestSlot> free = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Thread> waiters = new ConcurrentLinkedQueue<>();
    /** Incremented after each collection that took something, and after a recovery. */
    private final AtomicLong drains = new AtomicLong();
    /** A poll queue: no interrupt, callbacks off for good. */
    boolean pollQueue;
    /** Polled requests in the device; under the lock. On a normal queue, callbacks are off while > 0. */
    int hipriInFlight;

    RequestQueue(int index, GuestMemory memory, QueueLayout layout, DriverQueue ring, long indirectArea,
            int maxIndirect, SpinLock lock) {
        this.index = index;
        this.memory = memory;
        this.layout = layout;
        this.ring = ring;
        this.indirectArea = indirectArea;
        this.maxIndirect = maxIndirect;
        this.indirect = maxIndirect > 0;
        this.lock = lock;
    }

    public int index() {
        return index;
    }

    public SpinLock lock() {
        return lock;
    }

    /** Where the rings are in guest memory (kept across a re-probe). */
    public QueueLayout layout() {
        return layout;
    }

    /** Request slots: requests in flight at most. */
    public int slots() {
        return all.size();
    }

    public boolean pollQueue() {
        return pollQueue;
    }

    /** A free slot, or {@code null}; thread-safe. */
    public RequestSlot takeFree() {
        return free.poll();
    }

    /** Gives a collected slot back to the free list and wakes who waits for one. */
    public void release(RequestSlot slot) {
        slot.clear();
        free.add(slot);
    }

    /**
     * Adds the slot's chain to the ring; the lock is held. A polled request on a normal queue turns its
     * callbacks off first (while polled requests are in flight the queue is polled, not interrupted).
     *
     * @return false when the ring has no room for the chain (nothing changed but the callbacks)
     */
    public boolean add(RequestSlot slot) {
        if (slot.queue != this) {
            throw new IllegalArgumentException("slot of queue " + slot.queue.index + " added to queue " + index);
        }
        if (slot.hipri && !pollQueue && hipriInFlight == 0) {
            ring.disableCallbacks();
        }
        if (!ring.add(slot.chain, indirect && slot.chain.size() > 1, slot)) {
            return false;
        }
        slot.inDevice = true;
        if (slot.hipri) {
            hipriInFlight++;
        }
        return true;
    }

    /** virtqueue_kick_prepare: whether the device wants a notification now; the lock is held. */
    public boolean kickPrepare() {
        return ring.kickPrepare();
    }

    /** Whether the used ring holds something; without the lock, by the queue's only consumer. */
    public boolean hasUsed() {
        return ring.hasUsed();
    }

    /**
     * virtblk_done: under the lock, collect the used buffers with callbacks off, re-enable them and repeat
     * while more arrived. While polled requests are in flight the callbacks stay off (they are polled for).
     */
    public void drain(int cpu, List<RequestSlot> done) {
        lock.lock(cpu);
        try {
            do {
                ring.disableCallbacks();
                collect(done);
                if (hipriInFlight > 0) {
                    break;
                }
            } while (!ring.enableCallbacks());
        } catch (IllegalStateException e) {
            throw corrupt(e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * virtblk_poll: collect under the lock. On a normal queue, the reap that completes its last polled request
     * turns callbacks back on and, when used buffers arrived meanwhile (enable_cb returned false), collects
     * again: nothing is left without an interrupt or a poll.
     */
    public void reap(int cpu, List<RequestSlot> done) {
        lock.lock(cpu);
        try {
            while (true) {
                collect(done);
                if (pollQueue || hipriInFlight > 0 || ring.enableCallbacks()) {
                    break;
                }
            }
        } catch (IllegalStateException e) {
            throw corrupt(e);
        } finally {
            lock.unlock();
        }
    }

    private GuestDriverException corrupt(IllegalStateException e) {
        return new GuestDriverException("used ring of queue " + index + " is corrupt: " + e.getMessage(), e);
    }

    /** Takes every used buffer (the lock is held, or nobody else runs). */
    void collect(List<RequestSlot> done) {
        UsedBuffer used;
        while ((used = ring.getUsed()) != null) {
            RequestSlot slot = claim(used.token());
            slot.usedLength = used.writtenBytes();
            slot.completed();
            if (slot.hipri) {
                hipriInFlight--;
            }
            done.add(slot);
        }
    }

    /** Maps a used token back to its slot; the device may not invent or repeat buffers (section 2.7.8). */
    private RequestSlot claim(Object token) {
        if (!(token instanceof RequestSlot slot) || slot.queue != this || !slot.inDevice) {
            throw new GuestDriverException("device returned a buffer on queue " + index
                    + " that the driver did not make available (VIRTIO 1.2 section 2.7.8)");
        }
        slot.inDevice = false;
        return slot;
    }

    /** Slots in the device now (added, not collected); a snapshot, exact under the lock. */
    public int inDevice() {
        int n = 0;
        for (RequestSlot s : all) {
            if (s.inDevice) {
                n++;
            }
        }
        return n;
    }

    // Waiting for room (a free slot, free descriptors) ------------------------------------------------

    /** Collections so far: a waiter for descriptors waits until this moves. */
    public long drains() {
        return drains.get();
    }

    /** Registers the current thread to be unparked by the next collection. */
    public void addWaiter(Thread t) {
        waiters.add(t);
    }

    public void removeWaiter(Thread t) {
        waiters.remove(t);
    }

    /** After a collection: counts it and unparks the waiters. */
    public void drained() {
        drains.incrementAndGet();
        for (Thread t : waiters) {
            LockSupport.unpark(t);
        }
    }

    void addSlot(RequestSlot slot) {
        all.add(slot);
        free.add(slot);
    }
}
