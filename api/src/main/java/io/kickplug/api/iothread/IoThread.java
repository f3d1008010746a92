package io.kickplug.api.iothread;

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
