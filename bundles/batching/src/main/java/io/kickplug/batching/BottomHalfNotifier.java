package io.kickplug.batching;

import io.kickplug.api.notify.CompletionNotifier;
import org.osgi.service.component.annotations.Component;

/**
 * QEMU's old virtio-blk notification bottom half: at the end of a batch the queue schedules a task for the
 * end of its I/O thread's current loop iteration, which makes the decision for everything completed in
 * that iteration. A queue has at most one task scheduled, so it gets at most one decision (and
 * notification) per loop iteration, however many batches ended in it. A batch's start and each used buffer need
 * nothing of it (the queue counts the buffers; the bottom half decides).
 */
@Component(service = CompletionNotifier.class, property = CompletionNotifier.PROPERTY + "=" + BottomHalfNotifier.NAME)
public final class BottomHalfNotifier implements CompletionNotifier {

    public static final String NAME = "bh";

    /** A queue's bottom half: its attachment while this strategy serves it. I/O thread only. */
    private static final class BottomHalf implements Runnable {
        final Queue queue;
        boolean scheduled;

        BottomHalf(Queue queue) {
            this.queue = queue;
        }

        @Override
        public void run() {
            scheduled = false;
            // After a detach the queue belongs to another strategy, which owns its decisions.
            if (queue.attachment() == this) {
                queue.notifyIfNeeded();
            }
        }
    }

    @Override
    public void end(Queue queue) {
        BottomHalf bh = queue.attachment() instanceof BottomHalf b ? b : null;
        if (bh == null) {
            bh = new BottomHalf(queue);
            queue.attach(bh);
        }
        if (!bh.scheduled) {
            bh.scheduled = true;
            queue.ioThread().executeAtEndOfIteration(bh);
        }
    }

    /** The scheduled bottom half (if any) becomes a no-op; the decision it owed is made now. */
    @Override
    public void detach(Queue queue) {
        queue.attach(null);
        queue.notifyIfNeeded();
    }

    @Override
    public String toString() {
        return NAME;
    }
}
