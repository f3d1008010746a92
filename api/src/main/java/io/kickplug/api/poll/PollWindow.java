package io.kickplug.api.poll;

import org.osgi.annotation.versioning.ConsumerType;

/** The poll window of one polled source; used only by its I/O thread, so not thread-safe. */
@ConsumerType
public interface PollWindow {

    /** How long to poll before blocking, in nanoseconds; 0 means do not poll. */
    long pollNs();

    /**
     * Adjusts the window after a wait that ended with this source ready ({@code blockNs}: from the start
     * of the wait phase, polling included, until the source was found ready or the thread woke up).
     */
    void update(long blockNs);
}
