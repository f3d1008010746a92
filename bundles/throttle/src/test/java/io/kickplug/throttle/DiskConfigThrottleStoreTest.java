package io.kickplug.throttle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.DiskManager;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * kp:throttle's limits go into the disk's configuration through the disk manager, which writes them one at a time
 * with the settings it keeps there itself (a write of each from its own copy of the properties would undo the
 * other's).
 */
class DiskConfigThrottleStoreTest {

    private final List<String> kept = new ArrayList<>();

    /** A disk manager that keeps settings for disk d0 only (the others have no configuration). */
    private final DiskManager manager = (DiskManager) Proxy.newProxyInstance(DiskManager.class.getClassLoader(),
            new Class<?>[] {DiskManager.class}, (p, m, a) -> {
                if (m.getName().equals("keepSettings")) {
                    kept.add(a[0] + " " + a[1] + " " + a[2]);
                    return "d0".equals(a[0]);
                }
                throw new UnsupportedOperationException(m.getName());
            });

    @Test
    void theLimitsAreKeptThroughTheDiskManager() {
        DiskConfigThrottleStore store = new DiskConfigThrottleStore(() -> null, () -> manager);
        assertTrue(store.save("d0", Map.of("iops-total", "5000")));
        assertFalse(store.save("d1", Map.of("iops-total", "5000")), "no configuration, and no ConfigAdmin either");
        assertEquals(List.of("d0 throttle. {iops-total=5000}", "d1 throttle. {iops-total=5000}"), kept);
    }

    @Test
    void withoutADiskManagerOrConfigAdminNothingIsKept() {
        DiskConfigThrottleStore store = new DiskConfigThrottleStore(() -> null, () -> null);
        assertFalse(store.save("d0", Map.of("iops-total", "5000")));
        assertEquals(Map.of(), store.load("d0"));
    }
}
