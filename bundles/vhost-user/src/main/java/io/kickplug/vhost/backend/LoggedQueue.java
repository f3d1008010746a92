package io.kickplug.vhost.backend;

import io.kickplug.api.memory.MemoryRegion;
import io.kickplug.api.virtio.AvailEventMode;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.DeviceQueue;

/**
 * A device queue that marks, in the {@link DirtyLog}, the device-writable buffers of each chain when the chain is
 * pushed to the used ring: the request's data (an IN request's, which zero-copy I/O wrote through views, after the
 * backend finished) and its status. Marked before the push, after every write of the request: a page the
 * front-end collects from then on holds them. The ring writes themselves go through {@link LoggedMemory}, which the
 * wrapped queue runs on. The outermost view of a queue while logging is on (inflight tracking inside it); confined
 * to the queue's I/O thread like the queue it wraps.
 *
 * <p>A chain that does not list its writable buffers ({@link DescriptorChain#writableBufferCount()} -1, a ring
 * implementation of another party) makes the queue mark every page of guest memory: too many pages cost the
 * front-end a copy, too few lose a write.
 */
final class LoggedQueue implements DeviceQueue {

    private final DeviceQueue queue;
    private final DirtyLog log;
    private final LoggedMemory memory;
    /** The chain of each head (split) or buffer ID (packed) between pop and push. */
    private final DescriptorChain[] chains;

    LoggedQueue(DeviceQueue queue, DirtyLog log, LoggedMemory memory) {
        this.queue = queue;
        this.log = log;
        this.memory = memory;
        this.chains = new DescriptorChain[queue.size()];
    }

    private DescriptorChain taken(DescriptorChain c) {
        if (c != null && c.head() >= 0 && c.head() < chains.length) {
            chains[c.head()] = c;
        }
        return c;
    }

    private void markWritten(int head) {
        DescriptorChain c = head >= 0 && head < chains.length ? chains[head] : null;
        if (c == null) {
            return; // the wrapped queue refuses a head it did not hand out
        }
        chains[head] = null;
        int n = c.writableBufferCount();
        if (n < 0) {
            for (MemoryRegion r : memory.regions()) {
                log.mark(r.guestAddress(), r.size());
            }
            return;
        }
        for (int i = 0; i < n; i++) {
            log.mark(c.writableBufferAddress(i), c.writableBufferLength(i));
        }
    }

    @Override
    public DescriptorChain pop() {
        return taken(queue.pop());
    }

    @Override
    public DescriptorChain popHead(int head) {
        return taken(queue.popHead(head));
    }

    @Override
    public void pushUsed(int head, int writtenBytes) {
        markWritten(head);
        queue.pushUsed(head, writtenBytes);
    }

    @Override
    public void pushUsedBatched(int head, int writtenBytes) {
        markWritten(head);
        queue.pushUsedBatched(head, writtenBytes);
    }

    @Override
    public void publishUsed() {
        queue.publishUsed();
    }

    @Override
    public int index() {
        return queue.index();
    }

    @Override
    public int size() {
        return queue.size();
    }

    @Override
    public boolean eventIdx() {
        return queue.eventIdx();
    }

    @Override
    public boolean hasAvailable() {
        return queue.hasAvailable();
    }

    @Override
    public boolean needsNotification() {
        return queue.needsNotification();
    }

    @Override
    public void disableNotification() {
        queue.disableNotification();
    }

    @Override
    public boolean enableNotification() {
        return queue.enableNotification();
    }

    @Override
    public void setAvailEventMode(AvailEventMode mode) {
        queue.setAvailEventMode(mode);
    }

    @Override
    public int nextAvail() {
        return queue.nextAvail();
    }

    @Override
    public int nextUsed() {
        return queue.nextUsed();
    }

    @Override
    public boolean isBroken() {
        return queue.isBroken();
    }

    /** The queue this one logs for. */
    DeviceQueue wrapped() {
        return queue;
    }
}
