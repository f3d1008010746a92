package io.kickplug.api.iothread;

import io.kickplug.api.poll.PollWindow;
import org.osgi.annotation.versioning.ProviderType;

/** A registered handler on an {@link IoThread}. */
@ProviderType
public interface IoSource {

    /** Makes the handler run in the loop's next iteration; callable from any thread, never blocks. */
    void signal();

    /** Unregisters the handler; it is not run after this returns, unless running now on the loop. */
    void cancel();

    /**
     * Makes the I/O thread poll this source with {@code handler} for up to the window's current length
     * before it blocks (QEMU's adaptive polling); {@code null} for both stops polling. Callable from any
     * thread; the loop switches at its next iteration, on its own thread: a source that stops polling gets
     * {@link PollHandler#pollEnd()} there, then one last poll, so no work is lost.
     *
     * @throws UnsupportedOperationException when the I/O thread cannot poll
     * @throws IllegalArgumentException when only one of the two is {@code null}
     */
    default void setPoll(PollHandler handler, PollWindow window) {
        throw new UnsupportedOperationException("this I/O thread cannot poll");
    }
}
