package io.kickplug.guest.testing;

import io.kickplug.api.notify.CompletionNotifier;

/**
 * A completion-notification strategy that decides once at the end of each batch, as defer-call does for one queue:
 * the simplest strategy that keeps the notifier contract. This module's tests use it where the batching bundle
 * (which depends on this one) is not on the class path.
 */
public final class EndOfBatchNotifier implements CompletionNotifier {
    @Override
    public void end(Queue queue) {
        queue.notifyIfNeeded();
    }
}
