package io.kickplug.vhost.backend;

import io.kickplug.api.virtio.AvailEventMode;
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
    /** Heads (split) or head entries (packed) the recovery hands out again first, oldest first; through {@link #nextResubmit}. */
    final ArrayDeque<Integer> resubmit;
    /** {@code resubmit.size()}, readable from the message thread while the queue runs ({@link #resubmitPending}). */
    private volatile int resubmitLeft;

    ForwardingInflightQueue(DeviceQueue queue, ArrayDeque<Integer> resubmit) {
        this.queue = queue;
        this.resubmit = resubmit;
        this.resubmitLeft = resubmit.size();
    }

    /** Adds an entry to hand out again (the packed recovery's, before the queue starts). */
    void addResubmit(int entry) {
        resubmit.add(entry);
        resubmitLeft = resubmit.size();
    }

    /** Takes the next entry to hand out again, or {@code null}; the queue's I/O thread. */
    Integer nextResubmit() {
        Integer e = resubmit.poll();
        if (e != null) {
            resubmitLeft = resubmit.size();
        }
        return e;
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

    /**
     * Passed on: the ring publishes avail_event (section 2.7.10) as the device configured it. Without this the
     * interface's default ignored the mode, and a queue tracked in the inflight area kept
     * {@link AvailEventMode#ENABLE} whatever the device asked.
     */
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

    /**
     * Entries the recovery put back and the device has not taken again yet; any thread (the message thread reads
     * it while the queue runs, before a GET_VRING_BASE stop).
     */
    int resubmitPending() {
        return resubmitLeft;
    }
}
