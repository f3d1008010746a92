package io.kickplug.itest;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waiting for a condition inside the framework (in the Pax Exam probe: JDK types only). */
final class Conditions {

    private Conditions() {
    }

    /**
     * Re-checks {@code condition} every millisecond until it holds (DS binds and bundles start on other threads);
     * an assertion error naming {@code what} when {@code seconds} pass first.
     */
    static void await(BooleanSupplier condition, String what, long seconds) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + seconds + " s waiting for " + what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }
}
