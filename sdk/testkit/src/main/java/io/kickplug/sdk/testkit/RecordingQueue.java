package io.kickplug.sdk.testkit;

import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.notify.CompletionNotifier;
import java.util.ArrayList;
import java.util.List;

/**
 * A virtqueue as a strategy sees it, with the device's bookkeeping and a driver model: used buffers pushed since
 * the last decision, a notification owed by a deferred decision, the decisions made and the notifications sent. The
 * driver wants every notification unless {@link #suppress(boolean)} is set (the NO_INTERRUPT flag); with
 * {@link #usedEvent(Integer)} set it wants them by EVENT_IDX's rule instead (VIRTIO 1.2 section 2.7.7.2).
 *
 * <p>It also records the calls a strategy must not make: from a thread other than the queue's I/O thread, and after
 * {@link #detached()}; {@link #violation()} returns the first. Calls the test makes in the role of the device (the
 * strategy that took over after a detach) go through {@link #asDevice(Runnable)}.
 */
public final class RecordingQueue implements CompletionNotifier.Queue {

    private final String device;
    private final int index;
    private final IoThread thread;
    private int pending;
    private Object attachment;
    private boolean owed;
    private boolean suppress;
    private Integer usedEvent;
    private int usedIdx;
    private int signalled;
    private long pushed;
    private long sent;
    private boolean detached;
    private boolean device_;
    private ContractViolation violation;
    /** Per decision: how many used buffers it covered. */
    private final List<Integer> covered = new ArrayList<>();

    public RecordingQueue(String device, int index, IoThread thread) {
        this.device = device;
        this.index = index;
        this.thread = thread;
    }

    /** What the device does after pushing a used buffer: counts it and tells the strategy. */
    public void push(CompletionNotifier strategy) {
        pending++;
        pushed++;
        usedIdx = (usedIdx + 1) & 0xffff;
        strategy.usedBufferPushed(this);
    }

    /** The driver sets or clears VIRTQ_AVAIL_F_NO_INTERRUPT (without EVENT_IDX). */
    public void suppress(boolean value) {
        suppress = value;
    }

    /** EVENT_IDX: the driver's used_event (a 16-bit ring index), or null for the NO_INTERRUPT flag model. */
    public void usedEvent(Integer value) {
        usedEvent = value == null ? null : value & 0xffff;
    }

    /** The used index published so far (16 bits). */
    public int usedIdx() {
        return usedIdx;
    }

    /** The strategy was detached from this queue: from now on it must leave the queue alone. */
    public void detached() {
        detached = true;
        attachment = null;
    }

    /** Runs {@code action} as the device (the strategy that took over), not as the strategy under test. */
    public void asDevice(Runnable action) {
        boolean was = device_;
        device_ = true;
        try {
            action.run();
        } finally {
            device_ = was;
        }
    }

    private void checkCaller(String method) {
        if (device_ || violation != null) {
            return;
        }
        if (detached) {
            violation = new ContractViolation(Rule.NO_CALL_AFTER_DETACH, "queue " + index + ": " + method
                    + " called after detach");
        } else if (thread != null && !thread.inLoop()) {
            violation = new ContractViolation(Rule.QUEUE_ON_IO_THREAD, "queue " + index + ": " + method
                    + " called on thread " + Thread.currentThread().getName() + ", not on " + thread.name());
        }
    }

    /** The first forbidden call seen, or null. */
    public ContractViolation violation() {
        return violation;
    }

    public long pushed() {
        return pushed;
    }

    public long sent() {
        return sent;
    }

    public boolean owed() {
        return owed;
    }

    /** Used buffers covered by each decision so far, in order. */
    public List<Integer> covered() {
        return List.copyOf(covered);
    }

    @Override
    public String device() {
        return device;
    }

    @Override
    public int index() {
        return index;
    }

    @Override
    public IoThread ioThread() {
        return thread;
    }

    @Override
    public int pendingUsed() {
        return pending;
    }

    /** One decision for the buffers pushed since the last: does the driver want a notification? */
    private boolean decide() {
        covered.add(pending);
        pending = 0;
        if (usedEvent == null) {
            return !suppress;
        }
        int old = signalled;
        signalled = usedIdx;
        // vring_need_event: the used index moved past used_event since the last decision (2.7.7.2)
        return ((usedIdx - usedEvent - 1) & 0xffff) < ((usedIdx - old) & 0xffff);
    }

    @Override
    public synchronized boolean notifyIfNeeded() {
        checkCaller("notifyIfNeeded");
        if (pending > 0 && decide()) {
            owed = false;
            sent++;
            return true;
        }
        boolean wasOwed = owed;
        send();
        return wasOwed;
    }

    @Override
    public synchronized boolean notificationWanted() {
        checkCaller("notificationWanted");
        if (pending == 0) {
            return false;
        }
        if (decide() && !owed) {
            owed = true;
            return true;
        }
        return owed;
    }

    @Override
    public synchronized void sendNotification() {
        checkCaller("sendNotification");
        send();
    }

    private void send() {
        if (owed) {
            owed = false;
            sent++;
        }
    }

    @Override
    public Object attachment() {
        return attachment;
    }

    @Override
    public void attach(Object value) {
        checkCaller("attach");
        attachment = value;
    }
}
