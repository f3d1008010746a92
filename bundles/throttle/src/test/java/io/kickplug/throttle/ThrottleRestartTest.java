package io.kickplug.throttle;

import static io.kickplug.throttle.ThrottledBackendTest.read;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.throttle.ThrottledBackendTest.Recording;
import io.kickplug.virtio.testkit.Await;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What outlives a {@link Throttles} (the throttle bundle's life): the settings {@code kp:throttle} saved in the
 * disks' configurations come back at the disks' first wrap in the next life; a retired wrapper (the disk manager
 * rebuilt the disk's filter chain) lets what waits go on and keeps its counters in the disk's stats.
 */
class ThrottleRestartTest {

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final AtomicLong now = new AtomicLong();

    /** The disks' configurations, as ConfigAdmin would keep them (only disks with a configuration are saved). */
    private final Map<String, Map<String, String>> configs = new ConcurrentHashMap<>();
    private final ThrottleStore store = new ThrottleStore() {
        @Override
        public Map<String, String> load(String disk) {
            return configs.getOrDefault(disk, Map.of());
        }

        @Override
        public boolean save(String disk, Map<String, String> settings) {
            if (!configs.containsKey(disk)) {
                return false;
            }
            configs.put(disk, Map.copyOf(settings));
            return true;
        }
    };

    @AfterEach
    void tearDown() {
        timer.shutdownNow();
    }

    private static int admitted(AsyncBlockBackend disk, Recording inner, int n) {
        int before = inner.offsets.size();
        for (int i = 0; i < n; i++) {
            disk.submit(read(i * 512L));
        }
        return inner.offsets.size() - before;
    }

    @Test
    void limitsAndGroupsSavedByKpThrottleComeBackInTheNextLife() throws Exception {
        configs.put("a", Map.of());
        configs.put("b", Map.of());
        Throttles first = new Throttles(now::get, timer, store);
        first.wrap("a", new Recording());
        first.wrap("b", new Recording());
        first.configure("a", List.of("--group", "g"));
        first.configure("b", List.of("--group", "g", "--iops", "10", "--iops-max", "20"));
        assertEquals(Map.of("group", "g", "iops-total", "10", "iops-total-max", "20"), configs.get("b"));
        assertEquals(configs.get("b"), configs.get("a"), "every member of the group keeps the group's limits");

        // The bundle stops and starts (or the runtime restarts): a new Throttles, the same configurations.
        Throttles second = new Throttles(now::get, timer, store);
        Recording ra = new Recording();
        Recording rb = new Recording();
        AsyncBlockBackend a = second.wrap("a", ra);
        AsyncBlockBackend b = second.wrap("b", rb);
        assertTrue(second.describe("a").contains("throttle group g"), second.describe("a"));
        assertTrue(second.describe("b").contains("iops-total=10"), second.describe("b"));
        // The clock stands still: a bucket of max 20 for 1 s plus 1 passes, shared by the two disks.
        int passed = admitted(a, ra, 15) + admitted(b, rb, 15);
        assertEquals(21, passed, "the saved group limits are in force for both disks together");

        second.configure("b", List.of("--clear"));
        assertEquals(Map.of("group", "g"), configs.get("b"), "a cleared group keeps only the membership");
        assertEquals(Map.of("group", "g"), configs.get("a"));
    }

    @Test
    void aDiskWithoutConfigurationIsThrottledButNothingIsSaved() {
        Throttles t = new Throttles(now::get, timer, store);
        t.wrap("x", new Recording());
        t.configure("x", List.of("--iops", "5"));
        assertTrue(configs.isEmpty());
        Throttles next = new Throttles(now::get, timer, store);
        next.wrap("x", new Recording());
        assertTrue(next.describe("x").contains("limits none"), next.describe("x"));
    }

    @Test
    void aRetiredWrapperLetsWhatWaitsGoOnAndTheDiskKeepsItsCounts() throws Exception {
        Throttles t = new Throttles(now::get, timer, store);
        Recording inner = new Recording();
        AsyncBlockBackend old = t.wrap("d", inner);
        t.configure("d", List.of("--iops", "10"));
        assertEquals(2, admitted(old, inner, 5), "1 s bucket of 1 request plus 1 (clock stands still)");
        AsyncBlockBackend next = t.wrap("d", inner); // the disk manager rebuilds the chain...
        old.close(); // ... and retires the old wrapper
        Await.await(() -> inner.offsets.size() == 5, "the waiting requests released at retirement");
        assertEquals(3L, t.stats("d").get("throttle_delayed_requests"), "counted across the retirement");
        assertEquals(0, admitted(next, inner, 3), "the new wrapper is under the same group's limits");
        assertEquals(3L, t.stats("d").get("throttle_waiting"));
        t.configure("d", List.of("--clear"));
        Await.await(() -> inner.offsets.size() == 8, "released by the limit change");
        assertEquals(6L, t.stats("d").get("throttle_delayed_requests"));
    }
}
