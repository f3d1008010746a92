package io.kickplug.blk.device;

import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DeviceSignals;
import io.kickplug.blk.notify.ImmediateNotifier;
import io.kickplug.blk.notify.NotifierRegistry;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * One enabled virtqueue during one activation, as completion-notification strategies see it: it brackets
 * the queue's completions into batches for the strategy in use, makes the notification decisions the
 * strategy asks for (VIRTIO 1.2 section 2.7.7.2), counts them, and switches strategies at safe points.
 *
 * <p>Confinement: everything but {@link #requestSwitch} and the getters runs on the queue's I/O thread.
 *
 * <p>Safe point: a switch happens only between batches of this queue (never between a strategy's
 * {@code begin} and {@code end}); the leaving strategy's {@code detach} makes the decisions it still owes,
 * then one more decision covers anything left, so no used buffer is left without its decision.
 */
final class QueueChannel implements CompletionNotifier.Queue {

    private static final Logger LOG = System.getLogger(QueueChannel.class.getName());

    private final String disk;
    private final DeviceQueue queue;
    private final DeviceSignals signals;
    private final IoContext context;
    private final QueueStats stats;
    private final NotifierRegistry registry;
    private CompletionNotifier strategy = ImmediateNotifier.INSTANCE;
    private Object attachment;
    private int pendingUsed;
    /** A {@link #notificationWanted()} decision wanted a notification that has not been sent yet. */
    private boolean owed;
    private boolean inBatch;
    private int batchSize;
    /** A switch was asked for; re-resolve at the next safe point. */
    private volatile boolean switchPending;
    /** Set when a switch was asked for in a batch: apply it when the batch ends. */
    private boolean switchAfterBatch;
    /** Latches of {@link #requestSwitch} callers waiting for the next resolution; I/O thread only after post. */
    private final List<CountDownLatch> waiting = new ArrayList<>();
    private final Object waitingLock = new Object();
    /**
     * Publishes the queue's used index and releases the requests it covers (the queue's worker); runs before
     * every decision, so a driver that gets the notification finds every used entry published and counted.
     */
    private Runnable publisher = () -> { };
    /** Set when the activation stops: decisions and switches do nothing after it. */
    private volatile boolean closed;

    QueueChannel(String disk, DeviceQueue queue, DeviceSignals signals, IoContext context, QueueStats stats,
            NotifierRegistry registry) {
        this.disk = disk;
        this.queue = queue;
        this.signals = signals;
        this.context = context;
        this.stats = stats;
        this.registry = registry;
        // Before the I/O thread sees the channel: the activation starts with the configured one.
        resolve(stats.configured, false);
    }

    /**
     * Sets the strategy that {@code wanted} (a configured name read once by the caller) resolves to, or the
     * fallback; true when it changed. A counted switch is added to the counters before the new name is
     * published, so a reader that sees the new name also sees the switch counted (the name is the volatile
     * write that publishes both).
     */
    private boolean resolve(String wanted, boolean countSwitch) {
        CompletionNotifier next = registry.resolve(wanted);
        String name = wanted;
        if (next == null) {
            next = ImmediateNotifier.INSTANCE;
            name = CompletionNotifier.IMMEDIATE;
        }
        if (next == strategy) {
            stats.inUse = name;
            return false;
        }
        strategy = next;
        if (countSwitch) {
            stats.switches.increment();
        }
        stats.inUse = name;
        return true;
    }

    @Override
    public String device() {
        return disk;
    }

    @Override
    public int index() {
        return queue.index();
    }

    @Override
    public IoThread ioThread() {
        return context.thread();
    }

    @Override
    public int pendingUsed() {
        return pendingUsed;
    }

    @Override
    public Object attachment() {
        return attachment;
    }

    @Override
    public void attach(Object value) {
        attachment = value;
    }

    QueueStats stats() {
        return stats;
    }

    /** Sets what publishes the used index before a decision; before the I/O thread sees the channel. */
    void publisher(Runnable publishUsed) {
        this.publisher = publishUsed;
    }

    @Override
    public boolean notifyIfNeeded() {
        if (closed) {
            return false;
        }
        if (pendingUsed > 0) {
            decide();
        }
        if (!owed) {
            return false;
        }
        // This decision's notification, or an earlier deferred one's: the used index it covers is published.
        owed = false;
        send();
        return true;
    }

    @Override
    public boolean notificationWanted() {
        if (closed || pendingUsed == 0) {
            return false;
        }
        return decide();
    }

    /**
     * One decision for the used buffers pushed since the last: publishes the used index, then asks the ring
     * (VIRTIO 1.2 section 2.7.7.2: the used index first, the decision reads used_event after it). A wanted
     * notification is owed until sent; one wanted while another is owed is covered by it and, like one not
     * wanted, counted as suppressed, so sent plus suppressed is the number of decisions.
     *
     * @return whether a notification is owed now
     */
    private boolean decide() {
        pendingUsed = 0;
        publisher.run();
        if (queue.needsNotification() && !owed) {
            owed = true;
            return true;
        }
        stats.interruptSuppressed();
        return owed;
    }

    @Override
    public void sendNotification() {
        if (owed && !closed) {
            owed = false;
            send();
        }
    }

    private void send() {
        signals.usedBuffer(queue.index());
        stats.interruptSent();
    }

    /** A used buffer was pushed: opens the batch when it is the first, then tells the strategy. */
    void pushed() {
        pendingUsed++;
        // Direct calls, not call(Runnable): a capturing lambda per used buffer would allocate.
        if (!inBatch) {
            inBatch = true;
            batchSize = 0;
            try {
                strategy.begin(this);
            } catch (RuntimeException | LinkageError e) {
                failed(e);
            }
        }
        batchSize++;
        try {
            strategy.usedBufferPushed(this);
        } catch (RuntimeException | LinkageError e) {
            failed(e);
        }
    }

    /** Whether a batch is open (the queue is in its I/O context's dirty list). */
    boolean inBatch() {
        return inBatch;
    }

    /** Closes the open batch, if any; a switch asked for meanwhile happens now. */
    void endBatch() {
        if (inBatch) {
            inBatch = false;
            stats.batch(batchSize);
            try {
                strategy.end(this);
            } catch (RuntimeException | LinkageError e) {
                failed(e);
            }
        }
        if (switchAfterBatch) {
            switchAfterBatch = false;
            applySwitch();
        }
    }

    /**
     * Any thread: asks the queue to re-resolve its configured strategy at its next safe point, which a task
     * on its I/O thread reaches within one loop iteration.
     *
     * @return counted down once the queue has re-resolved (or the activation stopped)
     */
    CountDownLatch requestSwitch() {
        CountDownLatch done = new CountDownLatch(1);
        synchronized (waitingLock) {
            waiting.add(done);
        }
        switchPending = true;
        if (closed) {
            closedAnswer();
        } else {
            context.post(this::applySwitchIfPending);
        }
        return done;
    }

    /** A safe point, unless a batch is open; I/O thread only. */
    void applySwitchIfPending() {
        if (switchPending) {
            applySwitch();
        }
    }

    private void applySwitch() {
        if (inBatch) {
            switchAfterBatch = true;
            return;
        }
        switchPending = false;
        // Only the callers that asked before the configuration is read below are answered by this resolution:
        // each wrote its configured name before it registered (requestSwitch), so this read sees it. One that
        // registers after the snapshot set switchPending after it, and the resolution its post runs answers it.
        // (Answering every waiter here answered a caller whose name was written after the read, with the old
        // strategy still in use: SwapUnderLoadTest, a switch right after a strategy service came back.)
        List<CountDownLatch> answered = takeWaiting();
        if (!closed) {
            String wanted = stats.configured;
            CompletionNotifier leaving = strategy;
            CompletionNotifier target = registry.resolve(wanted);
            if ((target == null ? ImmediateNotifier.INSTANCE : target) != leaving) {
                call(() -> leaving.detach(this));
                notifyIfNeeded(); // whatever the leaving strategy did not decide
                attachment = null;
                if (resolve(wanted, true)) {
                    LOG.log(Level.DEBUG, () -> "disk " + disk + " queue " + queue.index() + ": notifier " + leaving
                            + " -> " + stats.inUse);
                }
            }
        }
        answered.forEach(CountDownLatch::countDown);
    }

    private List<CountDownLatch> takeWaiting() {
        synchronized (waitingLock) {
            List<CountDownLatch> taken = List.copyOf(waiting);
            waiting.clear();
            return taken;
        }
    }

    /** The activation stops: no more decisions, switches or strategy calls. Any thread. */
    void close() {
        closed = true;
        closedAnswer();
    }

    /**
     * After close: the next activation starts with what the configured name resolves to; shows that, read
     * after the waiters were taken (as in {@link #applySwitch}), then answers them.
     */
    private void closedAnswer() {
        List<CountDownLatch> answered = takeWaiting();
        String wanted = stats.configured;
        stats.inUse = registry.resolve(wanted) != null ? wanted : CompletionNotifier.IMMEDIATE;
        answered.forEach(CountDownLatch::countDown);
    }

    /** A strategy that throws is a bug in its bundle: log it, fall back, and decide now. */
    private void call(Runnable strategyCall) {
        try {
            strategyCall.run();
        } catch (RuntimeException | LinkageError e) {
            failed(e);
        }
    }

    private void failed(Throwable e) {
        LOG.log(Level.ERROR, "disk " + disk + " queue " + queue.index() + ": notifier " + strategy
                + " failed, falling back to " + CompletionNotifier.IMMEDIATE, e);
        strategy = ImmediateNotifier.INSTANCE;
        stats.inUse = CompletionNotifier.IMMEDIATE;
        attachment = null;
        notifyIfNeeded();
    }
}
