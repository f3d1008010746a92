package io.kickplug.virtio.iothread;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.PollHandler;
import io.kickplug.api.poll.PollWindow;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A source of an {@link EventLoopThread}: a handler the loop runs when the source is signalled, with optional poll
 * settings, and for a descriptor source the descriptor the loop waits on ({@link LoopDescriptors}). Which fields
 * which thread may touch is said beside each.
 */
final class LoopSource implements IoSource {

    /** A source's poll settings. */
    record Poll(PollHandler handler, PollWindow window) {
    }

    private final EventLoopThread loop;
    final String sourceName;
    final Runnable handler;
    final AtomicBoolean pending = new AtomicBoolean();
    volatile boolean cancelled;
    /** The poll settings asked for; any thread. */
    volatile Poll wanted;
    /** The poll settings in use and whether its pollBegin ran; loop thread only. */
    Poll active;
    boolean begun;
    /** Found work in the current poll window; loop thread only. */
    boolean hit;
    /** A descriptor source's descriptor, its reader and what runs after each read; null otherwise. */
    final FileDescriptor fd;
    final FileInputStream reader;
    final Runnable onRead;
    /** Whether the loop waits on {@link #fd}; loop thread only. */
    boolean watching;
    /** A descriptor source not yet taken off the registration count ({@code registered}); loop only. */
    boolean counted;
    /** Set by the loop once a cancelled descriptor source is no longer watched (cancel() waits for it). */
    volatile boolean released;

    LoopSource(EventLoopThread loop, String sourceName, Runnable handler) {
        this(loop, sourceName, handler, null, null);
    }

    LoopSource(EventLoopThread loop, String sourceName, Runnable handler, FileDescriptor fd, Runnable onRead) {
        this.loop = loop;
        this.sourceName = sourceName;
        this.handler = handler;
        this.fd = fd;
        this.reader = fd == null ? null : new FileInputStream(fd); // never closed: the owner closes fd
        this.onRead = onRead;
        this.counted = fd != null;
    }

    @Override
    public void setPoll(PollHandler pollHandler, PollWindow window) {
        if ((pollHandler == null) != (window == null)) {
            throw new IllegalArgumentException("a polled source needs both a poll handler and a poll window");
        }
        wanted = pollHandler == null ? null : new Poll(pollHandler, window);
        loop.pollChanged(this);
    }

    @Override
    public void signal() {
        if (!cancelled && pending.compareAndSet(false, true)) {
            loop.signalled(this);
        }
    }

    @Override
    public void cancel() {
        cancelled = true;
        loop.cancelled(this);
    }
}
