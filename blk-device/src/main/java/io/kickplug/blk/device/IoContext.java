package io.kickplug.blk.device;

import io.kickplug.api.iothread.IoThread;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One I/O thread as one device activation uses it: a queue of work handed back from other threads
 * (completions from the worker pool, deferred requests whose dependencies ended), run in batches on the
 * I/O thread, and the queues that pushed used buffers in the current batch, whose completion-notification
 * strategies hear of the batch's end ({@link QueueChannel#endBatch()}).
 */
final class IoContext {

    private static final Logger LOG = System.getLogger(IoContext.class.getName());

    private final IoThread thread;
    private final int index;
    private final ConcurrentLinkedQueue<Runnable> pending = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    /** Queues with pushes since their last notification decision; I/O thread only. */
    private final List<QueueWorker> dirty = new ArrayList<>();

    IoContext(IoThread thread, int index) {
        this.thread = thread;
        this.index = index;
    }

    IoThread thread() {
        return thread;
    }

    /** The I/O thread's index in the disk's thread list (its shard of a sharded tracked list). */
    int index() {
        return index;
    }

    /** Runs {@code work} on the I/O thread, in a batch with other work; callable from any thread. */
    void post(Runnable work) {
        pending.add(work);
        if (scheduled.compareAndSet(false, true)) {
            try {
                thread.execute(this::runPending);
            } catch (RuntimeException stopped) {
                scheduled.set(false);
                LOG.log(Level.ERROR, "I/O thread " + thread.name() + " refused work: " + stopped.getMessage());
            }
        }
    }

    /** Runs the work posted so far, then ends the batch of every queue that pushed. I/O thread only. */
    void runPending() {
        scheduled.set(false);
        Runnable work;
        while ((work = pending.poll()) != null) {
            try {
                work.run();
            } catch (RuntimeException e) {
                LOG.log(Level.ERROR, "I/O thread " + thread.name() + ": completion failed", e);
            }
        }
        notifyDirty();
    }

    /** Remembers that {@code worker}'s queue pushed a used buffer in this batch. I/O thread only. */
    void markDirty(QueueWorker worker) {
        if (!worker.dirty) {
            worker.dirty = true;
            dirty.add(worker);
        }
    }

    /**
     * Ends the batch of every queue that pushed since the last call: its strategy makes or schedules the
     * notification decisions (VIRTIO 1.2 section 2.7.7.2). I/O thread only.
     */
    void notifyDirty() {
        for (int i = 0; i < dirty.size(); i++) {
            QueueWorker worker = dirty.get(i);
            worker.dirty = false;
            worker.endBatch();
        }
        dirty.clear();
    }
}
