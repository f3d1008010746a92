package io.kickplug.shell;

import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Waiting, bounded, for a service to take up another one that has just been registered. Service events reach
 * the components that bind a service one after the other: a command that sees a new poll policy or strategy
 * may ask the disk manager a moment before the disk manager has bound it (a bundle starting, or updated, while
 * the command runs).
 */
final class BoundedWait {

    /** How long a command waits for the disk manager to take up a service the command already sees. */
    static final long TAKE_UP_MILLIS = 2_000;
    private static final long STEP_MILLIS = 5;

    private BoundedWait() {
    }

    /**
     * {@code get}'s value once {@code done} accepts it, or its last value after {@code millis}; {@code what}
     * names what is waited for in the message of an interrupt.
     */
    static <T> T until(Supplier<T> get, Predicate<T> done, long millis, String what) {
        long deadline = System.nanoTime() + millis * 1_000_000;
        T value = get.get();
        while (!done.test(value) && System.nanoTime() - deadline < 0) {
            DiskManagerWait.pause(STEP_MILLIS, what);
            value = get.get();
        }
        return value;
    }
}
