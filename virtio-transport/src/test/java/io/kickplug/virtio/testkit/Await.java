package io.kickplug.virtio.testkit;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waiting on a condition in tests, never on a sleep: the condition is re-checked until it holds or the timeout
 * passes, which fails the test with what was awaited. The first checks spin (a condition an I/O thread makes
 * true within microseconds is seen at once); later ones park for a millisecond between checks, so a long wait
 * leaves the CPU to the threads it waits for.
 */
public final class Await {

    /** What tests wait for when they name no timeout. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
    private static final int SPINS = 10_000;

    private Await() {
    }

    /** Waits up to {@link #DEFAULT_TIMEOUT}; throws an {@link AssertionError} naming {@code what} on timeout. */
    public static void await(BooleanSupplier condition, String what) {
        await(condition, DEFAULT_TIMEOUT, () -> what);
    }

    public static void await(BooleanSupplier condition, Duration timeout, String what) {
        await(condition, timeout, () -> what);
    }

    /** {@code what} is asked for only on a timeout (it may describe the state then, e.g. a log). */
    public static void await(BooleanSupplier condition, Duration timeout, Supplier<String> what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int i = 0; !condition.getAsBoolean(); i++) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what.get());
            }
            if (i < SPINS) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
        }
    }
}
