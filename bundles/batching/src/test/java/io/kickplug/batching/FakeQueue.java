package io.kickplug.batching;

import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.notify.CompletionNotifier;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * A queue as a strategy sees it, with the device's bookkeeping: used buffers pushed since the last decision,
 * and a record of the decisions (with the loop iteration each happened in). The driver wants every
 * notification unless {@link #suppress} is set.
 */
final class FakeQueue implements CompletionNotifier.Queue {

    private final int index;
    private final IoThread thread;
    private final LongSupplier iteration;
    private int pending;
    private Object attachment;
    boolean suppress;
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

    @Override
    public synchronized boolean notifyIfNeeded() {
        if (pending == 0) {
            return false;
        }
        decisions.add(iteration.getAsLong());
        covered.add(pending);
        pending = 0;
        if (suppress) {
            return false;
        }
        sent++;
        return true;
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
