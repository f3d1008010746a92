package io.kickplug.guest.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import io.kickplug.api.blk.DiskSpec;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A model-charged point's device work is read by the disk's virtual I/O threads, which may run one more iteration
 * while the point detaches the disk. The detach holds the disk manager's lock and waits up to 10 s for those
 * threads to end, so a read that asked the disk manager then waited for that lock until the detach gave up on
 * the thread: in CI, one point in three of {@code kp:bench seeds --charging model} took 10 s more.
 */
class SeedPointRunnerTest {

    private final DiskRegistry registry = InProcessHost.registry();

    @AfterEach
    void tearDown() {
        registry.close();
    }

    @Test
    void aStoppedPointsDeviceWorkIsReadWithoutTheDiskManagersLock() throws Exception {
        registry.attach(DiskSpec.memory("w0", 1 << 20));
        SeedPointRunner.DeviceWork work = new SeedPointRunner.DeviceWork(registry, "w0");
        assertEquals(0, work.getAsLong(), "no request yet");
        work.stop();
        CompletableFuture<Long> read;
        synchronized (registry) { // as DiskRegistry.detach holds it while it waits for the I/O threads
            read = CompletableFuture.supplyAsync(work::getAsLong);
            try {
                assertEquals(0L, read.get(30, TimeUnit.SECONDS));
            } catch (TimeoutException e) {
                fail("the I/O thread's read waited for the disk manager's lock");
            }
        }
    }

    @Test
    void aDetachedDisksDeviceWorkKeepsItsLastCount() {
        registry.attach(DiskSpec.memory("w1", 1 << 20));
        SeedPointRunner.DeviceWork work = new SeedPointRunner.DeviceWork(registry, "w1");
        registry.detach("w1");
        assertEquals(0, work.getAsLong(), "a detached disk's last count stands");
        assertFalse(registry.list().stream().anyMatch(d -> d.name().equals("w1")));
    }
}
