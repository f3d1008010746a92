package io.kickplug.api.iothread;

import java.io.FileDescriptor;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A device-side event loop on its own thread (QEMU's IOThread). Work arrives as signalled sources and as
 * tasks; the loop runs every pending source, then the tasks, then waits.
 */
@ProviderType
public interface IoThread extends AutoCloseable {

    String name();

    /**
     * Registers {@code handler}, run on this thread once per loop iteration after
     * {@link IoSource#signal()} was called (signals that arrive before it runs coalesce).
     */
    IoSource register(String name, Runnable handler);

    /** Runs {@code task} on this thread, in order with other tasks. */
    void execute(Runnable task);

    /**
     * Runs {@code task} on this thread at the end of the current loop iteration, after its sources and
     * tasks (QEMU's bottom half scheduled from a handler); called from outside the loop, at the end of the
     * next iteration. The caller deduplicates: each call runs its task once.
     */
    default void executeAtEndOfIteration(Runnable task) {
        execute(task);
    }

    /**
     * Whether {@link #registerDescriptor} works: the loop can wait on file descriptors itself (one poll over its
     * descriptors plus a wake-up descriptor, as QEMU's AioContext does).
     */
    default boolean waitsOnDescriptors() {
        return false;
    }

    /**
     * Registers {@code handler}, run on this thread when {@code fd} (an eventfd, or a pipe) became readable:
     * the loop includes {@code fd} in its own wait (through {@code poller}), reads the descriptor's counter
     * (resetting it, eventfd(2)), runs {@code onRead} (if not {@code null}: e.g. a kick counter) and then the
     * handler, with no other thread in between. {@link IoSource#signal()} runs the handler too. From now on, signals from other threads wake the loop through a wake-up descriptor while it
     * waits on descriptors. Every descriptor source of one loop uses the same poller.
     *
     * <p>{@link IoSource#cancel()} of such a source returns only after the loop stopped watching {@code fd} (when
     * called from another thread), so the caller may close it then; the loop never closes it.
     *
     * @throws UnsupportedOperationException when {@link #waitsOnDescriptors()} is false
     * @throws IllegalStateException when the loop already waits with another poller
     */
    default IoSource registerDescriptor(String name, FileDescriptor fd, DescriptorPoller poller, Runnable onRead,
            Runnable handler) {
        throw new UnsupportedOperationException("this I/O thread cannot wait on file descriptors");
    }

    /** True when called from this loop's thread. */
    boolean inLoop();

    /** Loop iterations so far. */
    long iterations();

    /** CPU time of the loop thread in nanoseconds, or -1 when the JVM cannot measure it. */
    long cpuTimeNanos();

    /** Stops the loop after the current iteration and waits for its thread to end. Idempotent. */
    @Override
    void close();
}
