package io.kickplug.batching;

import io.kickplug.api.notify.CompletionNotifier;
import java.util.ArrayList;
import java.util.List;
import org.osgi.service.component.annotations.Component;

/**
 * Completion batching with QEMU's {@code defer_call()} (seed 002): {@link #begin}/{@link #end} nest per
 * thread; inside them each used buffer is decided on at once ({@link Queue#notificationWanted()}, QEMU's
 * {@code virtio_should_notify()} per completion in {@code virtio_notify_irqfd()}), and the notification it
 * wants is deferred, deduplicated per queue, and sent once when the thread's outermost {@link #end} runs (the
 * deferred irqfd write). Outside any bracket a used buffer is decided on and notified at once, like
 * {@code defer_call()} runs its function immediately when no section is open.
 *
 * <p>Deciding per buffer, not once at the end, matters with EVENT_IDX: a driver that re-enables callbacks
 * ({@code used_event}) in the middle of the batch after consuming what was pushed so far wants no
 * notification for the buffers pushed before, and gets one only if a later buffer crosses its
 * {@code used_event} (VIRTIO 1.2 section 2.7.7.2).
 *
 * <p>All calls of one thread's sections happen on that thread (the device's I/O thread), so the state is a
 * per-thread depth and list, with no locking.
 */
@Component(service = CompletionNotifier.class, property = CompletionNotifier.PROPERTY + "=" + DeferCallNotifier.NAME)
public final class DeferCallNotifier implements CompletionNotifier {

    public static final String NAME = "defer-call";

    /** A queue's attachment while it sits in its thread's deferred list. */
    private static final Object DEFERRED = new Object() {
        @Override
        public String toString() {
            return "deferred";
        }
    };

    /** One thread's open sections and the queues whose notification waits for the outermost end. */
    private static final class Sections {
        int depth;
        List<Queue> deferred = new ArrayList<>();
        /** The other list, swapped in at the outermost end (no copy per batch); null while it is being drained. */
        List<Queue> spare = new ArrayList<>();
    }

    private final ThreadLocal<Sections> sections = ThreadLocal.withInitial(Sections::new);

    @Override
    public void begin(Queue queue) {
        sections.get().depth++;
    }

    @Override
    public void usedBufferPushed(Queue queue) {
        Sections s = sections.get();
        if (s.depth == 0) {
            queue.notifyIfNeeded();
        } else if (queue.notificationWanted() && queue.attachment() != DEFERRED) {
            queue.attach(DEFERRED);
            s.deferred.add(queue);
        }
    }

    @Override
    public void end(Queue queue) {
        Sections s = sections.get();
        if (s.depth == 0) {
            throw new IllegalStateException("defer-call: end without begin on queue " + queue.index());
        }
        if (--s.depth > 0) {
            return;
        }
        // The outermost end: one send per queue that owes a notification. A send may run device code that
        // opens a new section on this thread; it starts from the emptied list.
        List<Queue> due = s.deferred;
        s.deferred = s.spare != null ? s.spare : new ArrayList<>(); // a nested end while draining: a new list
        s.spare = null;
        for (int i = 0; i < due.size(); i++) {
            Queue q = due.get(i);
            if (q.attachment() == DEFERRED) {
                q.attach(null);
                q.sendNotification();
            }
        }
        due.clear();
        s.spare = due;
    }

    /** Leaving a queue in the middle of another queue's section: decide for it and send what it owes now. */
    @Override
    public void detach(Queue queue) {
        if (queue.attachment() == DEFERRED) {
            queue.attach(null);
            sections.get().deferred.remove(queue);
        }
        queue.notifyIfNeeded();
    }

    /** Sections open on the calling thread (for tests). */
    int depth() {
        return sections.get().depth;
    }

    @Override
    public String toString() {
        return NAME;
    }
}
