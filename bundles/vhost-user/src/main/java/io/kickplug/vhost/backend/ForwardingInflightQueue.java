package io.kickplug.vhost.backend;

import io.kickplug.api.virtio.DeviceQueue;
import java.util.ArrayDeque;

/**
 * What the split and packed inflight queues ({@link InflightQueue}, {@link PackedInflightQueue}) share: the
 * wrapped ring, the entries still to resubmit after a back-end restart, and the calls that go straight to the
 * ring. Confined to the queue's I/O thread like the queue it wraps; the forwarding methods are plain calls on
 * the wrapped queue, as they were in each subclass.
 */
abstract class ForwardingInflightQueue implements DeviceQueue {

    /** The ring this queue records in the inflight area. */
    final DeviceQueue queue;
    /** Heads (split) or buffer IDs (packed) the recovery hands out again first, oldest first. */
    final ArrayDeque<Integer> resubmit;

    ForwardingInflightQueue(DeviceQueue queue, ArrayDeque<Integer> resubmit) {
        this.queue = queue;
        this.resubmit = resubmit;
    }

    /** One element as a batch of one: recorded, then published with its used index (see {@link #publishUsed}). */
    @Override
    public void pushUsed(int head, int writtenBytes) {
        pushUsedBatched(head, writtenBytes);
        publishUsed();
    }

    @Override
    public boolean needsNotification() {
        publishUsed(); // the wrapped queue would publish the batch's used index without recording it in the area
        return queue.needsNotification();
    }

    @Override
    public int index() {
        return queue.index();
    }

    @Override
    public boolean eventIdx() {
        return queue.eventIdx();
    }

    @Override
    public void disableNotification() {
        queue.disableNotification();
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

    /** Entries the recovery put back and not yet taken again. */
    int resubmitPending() {
        return resubmit.size();
    }
}
