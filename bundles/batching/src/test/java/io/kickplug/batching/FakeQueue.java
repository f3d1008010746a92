package io.kickplug.batching;

import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.notify.CompletionNotifier;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * A queue as a strategy sees it, with the device's bookkeeping: used buffers pushed since the last decision,
 * a notification owed by a deferred decision, and a record of the decisions (with the loop iteration each
 * happened in). The driver wants every notification unless {@link #suppress} is set; with {@link #usedEvent}
 * set, it wants them by EVENT_IDX's rule instead (VIRTIO 1.2 section 2.7.7.2).
 */
final class FakeQueue implements CompletionNotifier.Queue {

    private final int index;
    private final IoThread thread;
    private final LongSupplier iteration;
    private int pending;
    private Object attachment;
    private boolean owed;
    boolean suppress;
    /** EVENT_IDX: the driver's used_event (a 16-bit ring index), or null for the NO_INTERRUPT flag model. */
    Integer usedEvent;
    /** EVENT_IDX: the used index the device has published, and the one its last decision covered. */
    int usedIdx;
    private int signalled;
    int pushed;
    int sent;
    /** Per decision: the loop iteration it happened in. */
    final List<Long> decisions = new ArrayList<>();
    /** Per decision: how many used buffers it covered. */
    final List<Integer> covered = new ArrayList<>();

    FakeQueue(int index, IoThread thread) {
        this.index = index;
        this.thread = thread;
        this.iteration = thread::iterations;
    }

    /** What the device does after pushing a used buffer. */
    void push(CompletionNotifier strategy) {
        pending++;
        pushed++;
        usedIdx = (usedIdx + 1) & 0xffff;
        strategy.usedBufferPushed(this);
    }

    /** A whole batch of {@code n} used buffers, as the device brackets it. */
    void batch(CompletionNotifier strategy, int n) {
        strategy.begin(this);
        for (int i = 0; i < n; i++) {
            push(strategy);
        }
        strategy.end(this);
    }

    @Override
    public String device() {
        return "fake";
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
        decisions.add(iteration.getAsLong());
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
        if (pending > 0 && decide()) {
            owed = false;
            sent++;
            return true;
        }
        boolean wasOwed = owed;
        sendNotification();
        return wasOwed;
    }

    @Override
    public synchronized boolean notificationWanted() {
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
        if (owed) {
            owed = false;
            sent++;
        }
    }

    boolean owed() {
        return owed;
    }

    @Override
    public Object attachment() {
        return attachment;
    }

    @Override
    public void attach(Object value) {
        attachment = value;
    }
}
