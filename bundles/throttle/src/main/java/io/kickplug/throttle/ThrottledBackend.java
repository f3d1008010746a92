package io.kickplug.throttle;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.ForwardingAsyncBackend;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One disk's backend behind its throttle group. Reads and writes ask the group; one that must wait is queued, and
 * every later one queues behind it (first come, first served, as QEMU does per direction), until the timer lets
 * the head through; flushes, discards and write-zeroes pass (the device orders a flush after the writes it waits
 * for, queued ones included). Counts the requests it delayed and for how long. After the bundle stopped
 * ({@link #passThrough()}) everything passes at once. Everything else (the disk's questions, unplug, FUA) goes on
 * to the backend it wraps as {@link ForwardingAsyncBackend} passes it.
 */
final class ThrottledBackend extends ForwardingAsyncBackend {

    private final String disk;
    private final ScheduledExecutorService timer;
    private volatile ThrottleGroup group;
    private final ArrayDeque<BackendIo> queue = new ArrayDeque<>();
    private final ArrayDeque<Long> queuedAt = new ArrayDeque<>();
    private ScheduledFuture<?> armed;
    private volatile boolean passThrough;
    /** {@code queue.size()}, written under this object's lock, read without it by {@link #submit}. */
    private volatile int queued;
    private long delayed;
    private long delayedNanos;
    /** What {@link #close} tells the wrapper's owner, or null. */
    private volatile Runnable onClose;

    ThrottledBackend(String disk, AsyncBlockBackend inner, ThrottleGroup group, ScheduledExecutorService timer) {
        super(inner);
        this.disk = disk;
        this.group = group;
        this.timer = timer;
        group.join(this);
    }

    String disk() {
        return disk;
    }

    void onClose(Runnable r) {
        onClose = r;
    }

    ThrottleGroup group() {
        return group;
    }

    /** Moves to another group; waiting requests are looked at again under its limits. */
    void moveTo(ThrottleGroup g) {
        ThrottleGroup old = group;
        if (old == g) {
            return;
        }
        old.leave(this);
        group = g;
        g.join(this);
        release();
    }

    @Override
    public void submit(BackendIo io) {
        BackendIo.Op op = io.op();
        // An unlimited group with nothing queued here admits at once: no lock, clock or bucket per request. Only a
        // limited group queues (queued counts it), so a request passing here while limits are being lifted can
        // overtake only requests that the release after the change lets through anyway.
        if (!passThrough && (op == BackendIo.Op.READ || op == BackendIo.Op.WRITE)
                && (group.limited() || queued != 0)) {
            synchronized (this) {
                if (!queue.isEmpty()) {
                    enqueue(io);
                    return;
                }
                long wait = group.admit(op == BackendIo.Op.WRITE, io.length());
                if (wait > 0) {
                    enqueue(io);
                    arm(wait);
                    return;
                }
            }
        }
        view.submit(io);
    }

    private void enqueue(BackendIo io) {
        queue.add(io);
        queuedAt.add(System.nanoTime());
        queued = queue.size();
    }

    private void arm(long waitNanos) {
        if (armed == null || armed.isDone()) {
            try {
                armed = timer.schedule(this::release, waitNanos, TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.RejectedExecutionException stopped) {
                passThrough = true; // the bundle is stopping: let everything through
                timerGone();
            }
        }
    }

    private void timerGone() {
        Thread t = new Thread(this::release, "kickplug-throttle-release");
        t.setDaemon(true);
        t.start();
    }

    /** Lets through the queued requests the group admits now, in order; re-arms for the rest. Any thread. */
    void release() {
        int n = 0;
        BackendIo[] out = null;
        synchronized (this) {
            armed = null;
            while (!queue.isEmpty()) {
                BackendIo head = queue.peek();
                if (!passThrough) {
                    long wait = group.admit(head.op() == BackendIo.Op.WRITE, head.length());
                    if (wait > 0) {
                        arm(wait);
                        break;
                    }
                }
                queue.poll();
                queued = queue.size();
                long since = queuedAt.poll();
                delayed++;
                delayedNanos += System.nanoTime() - since;
                if (out == null) {
                    out = new BackendIo[Math.max(4, queue.size() + 1)];
                }
                if (n == out.length) {
                    out = java.util.Arrays.copyOf(out, n * 2);
                }
                out[n++] = head;
            }
        }
        for (int i = 0; i < n; i++) {
            view.submit(out[i]);
        }
        if (n > 0) {
            view.unplug();
        }
    }

    /** The bundle stops: no more throttling for this disk; what waits goes now. */
    void passThrough() {
        passThrough = true;
        release();
    }

    /** This wrapper's counters, read together. */
    synchronized Delays delays() {
        return new Delays(delayed, delayedNanos, queue.size());
    }

    /**
     * Counters of delayed requests: how many were delayed, for how long in total, and how many wait now.
     */
    record Delays(long requests, long nanos, long waiting) {

        Delays plus(Delays other) {
            return new Delays(requests + other.requests, nanos + other.nanos, waiting + other.waiting);
        }
    }

    /**
     * Retires this wrapper: what still waits goes on to the backend at once (the disk manager retires a wrapper
     * when it rebuilds the disk's filter chain, and a device closes only after its requests completed, so nothing
     * waits then), the wrapper leaves its group, and the backend it was given is closed.
     */
    @Override
    public void close() throws IOException {
        passThrough();
        group.leave(this);
        if (onClose != null) {
            onClose.run();
        }
        super.close();
    }
}
