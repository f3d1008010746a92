package io.kickplug.api.iothread;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * How an I/O thread polls one {@link IoSource} (QEMU's io_poll, io_poll_begin, io_poll_end). All three
 * run on the source's I/O thread only.
 *
 * <p>The loop calls {@link #pollBegin()} before it polls, {@link #poll()} repeatedly while it polls (a true
 * result runs the source's handler as a signal would), and {@link #pollEnd()} before it blocks, followed
 * by one last {@link #poll()}: work that arrived while notifications were being re-enabled is found there,
 * so nothing is lost in the switch.
 */
@ConsumerType
public interface PollHandler {

    /** True when the source has work; cheap, never blocks. */
    boolean poll();

    /** Polling starts: ask the producer not to notify (e.g. disable virtqueue notifications). */
    void pollBegin();

    /** Polling ends: ask the producer to notify again. */
    void pollEnd();

    /**
     * The loop's account after each poll window in which this source was polled: {@code hits} polls that
     * found work (0 or 1), {@code misses} windows that ran out without work for anyone (0 or 1), and the
     * window's length in nanoseconds.
     */
    default void polled(int hits, int misses, long nanos) {
    }
}
