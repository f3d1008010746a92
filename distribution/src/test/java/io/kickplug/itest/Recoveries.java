package io.kickplug.itest;

import static org.junit.Assert.assertNull;

import io.kickplug.api.guest.DeviceRecoveries;
import io.kickplug.api.guest.DeviceRecovery;
import java.util.List;
import org.osgi.framework.BundleContext;

/**
 * What the guests' device recoveries since a point in time came to; each of them must have succeeded.
 *
 * @param count recoveries
 * @param longestNanos the longest pause of a guest (removal to first completion after the return)
 * @param resubmitted requests resubmitted by all of them
 */
record Recoveries(int count, long longestNanos, int resubmitted) {

    /** The recoveries since {@code startNanos} ({@link System#nanoTime()}); asserts that none failed. */
    static Recoveries since(BundleContext context, long startNanos) {
        List<DeviceRecovery> recoveries = InstalledBundles.service(context, DeviceRecoveries.class).since(startNanos);
        long longest = 0;
        int resubmitted = 0;
        for (DeviceRecovery r : recoveries) {
            assertNull("recovery of " + r.disk() + " failed", r.error());
            longest = Math.max(longest, r.pauseNanos());
            resubmitted += r.resubmitted();
        }
        return new Recoveries(recoveries.size(), longest, resubmitted);
    }

    double longestMillis() {
        return longestNanos / 1e6;
    }
}
