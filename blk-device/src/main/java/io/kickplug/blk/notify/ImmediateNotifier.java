package io.kickplug.blk.notify;

import io.kickplug.api.notify.CompletionNotifier;

/**
 * The built-in strategy and the fallback of every other one: one notification decision per used buffer,
 * right after it was pushed, so the only thing that saves interrupts is the ring's own suppression
 * (NO_INTERRUPT or EVENT_IDX's used_event, VIRTIO 1.2 section 2.7.7.2).
 */
public final class ImmediateNotifier implements CompletionNotifier {

    public static final ImmediateNotifier INSTANCE = new ImmediateNotifier();

    private ImmediateNotifier() {
    }

    @Override
    public void usedBufferPushed(Queue queue) {
        queue.notifyIfNeeded();
    }

    @Override
    public void end(Queue queue) {
        // every buffer was decided on when it was pushed
    }

    @Override
    public String toString() {
        return IMMEDIATE;
    }
}
