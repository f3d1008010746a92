package io.kickplug.api.notify;

import io.kickplug.api.iothread.IoThread;
import org.osgi.annotation.versioning.ConsumerType;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A completion-notification strategy: when a device sends the used-buffer notifications (interrupts) of
 * the buffers it completed. One DS service per strategy, named by the service property {@value #PROPERTY};
 * a device binds every strategy dynamically and looks each queue's configured name up among them.
 *
 * <p>Calls, all on the queue's I/O thread (a {@link Queue} is confined to it): for each batch of
 * completions of one queue on that thread, {@link #begin} before the first used buffer of the batch,
 * {@link #usedBufferPushed} after each one, {@link #end} after the last. Batches of different queues on
 * the same thread may interleave (all begins of a thread's batch come before its ends). {@link #detach}
 * when the queue stops using this strategy (a switch or the service going away), between batches.
 *
 * <p>The contract: after {@link #detach}, and whenever the I/O thread is idle, every used buffer pushed has
 * been followed by a decision ({@link Queue#notifyIfNeeded()} or {@link Queue#notificationWanted()}), and
 * every notification owed has been sent; a strategy may only delay a decision or a send to a later point on
 * the same I/O thread.
 */
@ConsumerType
public interface CompletionNotifier {

    /** Service property naming the strategy, e.g. "bh" or "defer-call". */
    String PROPERTY = "strategy.name";

    /** The built-in strategy: one decision per used buffer, right after it was pushed. */
    String IMMEDIATE = "immediate";

    /**
     * A batch of completions of {@code queue} starts on the calling I/O thread. Nothing by default: a strategy
     * that decides only at the end of a batch needs neither this nor {@link #usedBufferPushed}.
     */
    default void begin(Queue queue) {
    }

    /** {@code queue} pushed one used buffer (its used index is published). Nothing by default. */
    default void usedBufferPushed(Queue queue) {
    }

    /** The batch that {@link #begin} opened ended. */
    void end(Queue queue);

    /**
     * {@code queue} stops using this strategy: make every decision still owed now and send an owed
     * notification. The default makes one decision, which also sends what is owed.
     */
    default void detach(Queue queue) {
        queue.notifyIfNeeded();
    }

    /** One virtqueue of a device as a strategy sees it. Methods other than the getters: I/O thread only. */
    @ProviderType
    interface Queue {

        /** The disk (device) name. */
        String device();

        /** Virtqueue index. */
        int index();

        /** The I/O thread that owns the queue. */
        IoThread ioThread();

        /** Used buffers pushed since the last decision. */
        int pendingUsed();

        /**
         * Decides whether the driver wants a used-buffer notification for the buffers pushed since the
         * last decision (VIRTIO 1.2 section 2.7.7.2: with EVENT_IDX by {@code used_event}, else by the
         * NO_INTERRUPT flag) and sends it when so, or when a notification is owed ({@link #notificationWanted()}).
         * Without pushed buffers it makes no decision and only sends an owed notification.
         *
         * @return true when a notification was sent
         */
        boolean notifyIfNeeded();

        /**
         * Decides, as {@link #notifyIfNeeded()} does, for the buffers pushed since the last decision, but does
         * not send: the notification, when wanted, is owed until {@link #sendNotification()} (or
         * {@link #notifyIfNeeded()}) sends it. Several wanted decisions owe one notification. This is QEMU's
         * {@code virtio_notify_irqfd()} since seed 002's series: {@code virtio_should_notify()} per completion,
         * the irqfd write deferred with {@code defer_call()} and deduplicated.
         *
         * @return true when a notification is owed after this decision (this one or an earlier one wanted it)
         */
        boolean notificationWanted();

        /** Sends the notification owed by earlier {@link #notificationWanted()} decisions, if one is owed. */
        void sendNotification();

        /** The strategy's per-queue state; {@code null} until set, cleared when the strategy changes. */
        Object attachment();

        void attach(Object attachment);
    }
}
