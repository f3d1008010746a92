package io.kickplug.vhost.backend;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** The guarded wait with a deadline of the vhost-user objects whose state changes notify their own monitor. */
public final class MonitorWait {

    private MonitorWait() {
    }

    /**
     * Waits on {@code monitor}, which the caller holds, until {@code condition} holds or {@code timeout} passes;
     * every change the condition reads must {@code notifyAll} on the monitor.
     *
     * @return whether the condition holds (false: the time ran out)
     */
    public static boolean await(Object monitor, BooleanSupplier condition, long timeout, TimeUnit unit)
            throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (!condition.getAsBoolean()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(monitor, left);
        }
        return true;
    }
}
