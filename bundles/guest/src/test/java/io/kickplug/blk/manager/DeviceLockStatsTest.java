package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.blk.testkit.InProcessHost;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The tracked-requests locks of every disk as lock statistics rows (kp:lockstat), and their reset. */
class DeviceLockStatsTest {

    private final DiskRegistry registry = InProcessHost.registry();

    @AfterEach
    void tearDown() {
        registry.close();
    }

    private static void writes(RawRingGuest guest, int n) throws InterruptedException {
        for (int i = 0; i < n; i++) {
            guest.submit(0, List.of(BufferSpec.readable(guest.header(VirtioBlk.T_OUT, i), 16),
                    BufferSpec.readable(guest.alloc(512, 16), 512), BufferSpec.writable(guest.alloc(1, 1), 1)),
                    false, i);
            guest.awaitUsed(0, Duration.ofSeconds(10));
        }
    }

    private Map<String, LockStatRow> rows() {
        return registry.lockStats().stream().collect(Collectors.toMap(LockStatRow::name, Function.identity()));
    }

    @Test
    void rowsPerDiskAndLockKindWithAcquisitionsAndHoldTimes() throws Exception {
        registry.attach(new DiskSpec("d", new BackendSpec("memory", null, 1 << 20, false), TransportKind.MMIO, 1, 64,
                1, null, DiskSpec.DEFAULT_GUEST_MEMORY));
        assertEquals(List.of("d tracked-mutex"), List.copyOf(rows().keySet()), "the lock in use, before any I/O");
        RawRingGuest guest = new RawRingGuest(registry.port("d")).init(-1L, 1, 16);
        writes(guest, 5);
        LockStatRow mutex = rows().get("d tracked-mutex");
        // Each request takes the lock to register and again to end.
        assertTrue(mutex.acquisitions() >= 10, mutex.toString());
        assertTrue(mutex.holdtimeMaxNs() >= mutex.holdtimeMinNs() && mutex.holdtimeTotalNs() >= mutex.holdtimeMaxNs(),
                mutex.toString());

        registry.setTrackedLock("d", TrackedLockKind.SHARDED);
        writes(guest, 2);
        Map<String, LockStatRow> rows = rows();
        assertEquals(List.of("d tracked-mutex", "d tracked-sharded"), rows.keySet().stream().sorted().toList());
        assertTrue(rows.get("d tracked-sharded").acquisitions() >= 4);

        registry.resetLockStats();
        assertEquals(0, rows().get("d tracked-sharded").acquisitions());
        assertEquals(List.of("d tracked-sharded"), List.copyOf(rows().keySet()), "unused kinds drop out after reset");
    }
}
