package io.kickplug.itest.plugin;

import io.kickplug.api.notify.CompletionNotifier;
import org.osgi.service.component.annotations.Component;

/**
 * A notification strategy as a plugin writes one, registered the way the built-in ones are (a DS component with
 * the {@value CompletionNotifier#PROPERTY} property): one decision at the end of each batch of completions. Built
 * into its own bundle jar by io.kickplug.itest.PluginJar; the distribution does not contain it.
 */
@Component(property = CompletionNotifier.PROPERTY + "=" + EndOfBatchStrategy.NAME)
public final class EndOfBatchStrategy implements CompletionNotifier {

    public static final String NAME = "end-of-batch";

    @Override
    public void end(Queue queue) {
        queue.notifyIfNeeded();
    }
}
