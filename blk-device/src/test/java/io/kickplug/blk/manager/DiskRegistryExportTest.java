package io.kickplug.blk.manager;

import io.kickplug.blk.testkit.InProcessHost;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.virtio.DeviceActivation;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DeviceSignals;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.blk.backend.MemoryBackendFactory;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link DiskRegistry#exportDevice}: a second device over a disk's backend for the vhost-user transport. */
class DiskRegistryExportTest {

    private final List<BackendFactory> factories = List.of(new MemoryBackendFactory());
    private final DiskRegistry registry = InProcessHost.registry(() -> factories);

    @AfterEach
    void close() {
        registry.close();
    }

    @Test
    void anExportedDeviceHasTheRequestedQueuesOverTheSameDisk() {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        VirtioDevice device = registry.exportDevice("d0", 3);
        assertEquals(DeviceIds.BLOCK, device.deviceId());
        assertEquals(3, device.queueCount());
        assertEquals(DiskSpec.DEFAULT_QUEUE_SIZE, device.maxQueueSize());
        assertEquals((1 << 20) / 512, device.readConfig(0, 8), "capacity of the same backend (5.2.4)");
    }

    @Test
    void exportsPollWithTheDisksSettings() {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        registry.setPolling("d0", true, new io.kickplug.api.poll.PollParams(65536, 2, 0));
        io.kickplug.blk.device.VirtioBlkDevice early = registry.exportDevice("d0", 1);
        assertTrue(early.pollStatus().requested(), "a new export starts with the disk's polling request");
        assertEquals(65536, early.pollStatus().params().maxNs());
        registry.setPolling("d0", false, null);
        assertTrue(!early.pollStatus().requested(), "kp:poll off reaches the export");
    }

    @Test
    void kpTrackedLockReachesTheExportsAndTheirLocksHaveStatisticsRows() {
        registry.attach(DiskSpec.memory("d0", 1 << 20).withTrackedLock(io.kickplug.api.blk.TrackedLockKind.YIELDING));
        io.kickplug.blk.device.VirtioBlkDevice before = registry.exportDevice("d0", 1);
        assertEquals(io.kickplug.api.blk.TrackedLockKind.YIELDING, before.trackedRequests().kind());
        registry.setTrackedLock("d0", io.kickplug.api.blk.TrackedLockKind.MUTEX);
        assertEquals(io.kickplug.api.blk.TrackedLockKind.MUTEX, before.trackedRequests().kind(),
                "an export switches with its disk");
        io.kickplug.blk.device.VirtioBlkDevice after = registry.exportDevice("d0", 1);
        assertEquals(io.kickplug.api.blk.TrackedLockKind.MUTEX, after.trackedRequests().kind(),
                "a new export starts with the disk's current kind, not the one it was attached with");
        List<String> rows = registry.lockStats().stream().map(io.kickplug.api.lockstat.LockStatRow::name).toList();
        assertTrue(rows.containsAll(List.of("d0 tracked-mutex", "d0 export0 tracked-mutex", "d0 export1 tracked-mutex")),
                rows.toString());
    }

    @Test
    void unknownDisksAndBadQueueCountsAreRefused() {
        assertThrows(DiskException.class, () -> registry.exportDevice("nope", 1));
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        assertThrows(DiskException.class, () -> registry.exportDevice("d0", 0));
        assertThrows(DiskException.class, () -> registry.exportDevice("d0", DiskSpec.MAX_QUEUES + 1));
    }

    @Test
    void detachResetsAnActiveExportBeforeClosingTheBackend() {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        VirtioDevice device = registry.exportDevice("d0", 1);
        DeviceActivation none = activation();
        device.activate(none);
        registry.detach("d0");
        // A device refuses a second activation without a reset: this one passes, so detach reset it.
        device.activate(none);
        device.reset();
        assertTrue(registry.list().isEmpty());
    }

    @Test
    void aReleasedExportIsNotTouchedByDetach() {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        VirtioDevice device = registry.exportDevice("d0", 1);
        registry.releaseExport("d0", device);
        device.activate(activation());
        registry.detach("d0");
        assertThrows(IllegalStateException.class, () -> device.activate(activation()),
                "still active: detach no longer knew it");
        device.reset();
    }

    @Test
    void kpNotifyReachesTheExportAndItsCountersAreListedSeparately() {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        registry.setStrategy("d0", "bh", 0);
        VirtioDevice device = registry.exportDevice("d0", 2);
        List<QueueCounters> exported = registry.exportCounters("d0");
        assertEquals(2, exported.size(), "one row per exported queue");
        assertEquals("bh", exported.get(0).configured(), "the export starts with the disk's configuration");
        assertEquals("immediate", exported.get(1).configured());

        registry.setStrategy("d0", "defer-call", NotificationControl.ALL_QUEUES);
        exported = registry.exportCounters("d0");
        assertEquals("defer-call", exported.get(0).configured(), "kp:notify switches the export too");
        assertEquals("defer-call", exported.get(1).configured());
        registry.setStrategy("d0", "bh", 1);
        assertEquals("bh", registry.exportCounters("d0").get(1).configured());
        assertEquals("defer-call", registry.exportCounters("d0").get(0).configured());

        registry.releaseExport("d0", device);
        assertTrue(registry.exportCounters("d0").isEmpty());
        assertThrows(DiskException.class, () -> registry.exportCounters("nope"));
    }

    // 5.2.6.2: after a resize the device sends a configuration-change notification; kp:resize reaches the
    // exported devices (vhost-user front-ends re-read the capacity) as well as the disk's own device.
    @Test
    void resizeSignalsAConfigurationChangeOnTheExportedDevice() {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        VirtioDevice device = registry.exportDevice("d0", 1);
        java.util.concurrent.atomic.AtomicInteger changes = new java.util.concurrent.atomic.AtomicInteger();
        device.activate(activation(new DeviceSignals() {
            @Override
            public void usedBuffer(int queueIndex) {
            }

            @Override
            public void configChanged() {
                changes.incrementAndGet();
            }

            @Override
            public void deviceError(io.kickplug.api.virtio.GuestFaultException fault) {
            }

            @Override
            public boolean needsReset() {
                return false;
            }
        }));
        registry.resize("d0", 2 << 20);
        assertEquals(1, changes.get(), "one configuration change for the export");
        assertEquals((2 << 20) / 512, device.readConfig(0, 8), "the export reads the new capacity (5.2.4)");
        device.reset();
    }

    private static DeviceActivation activation() {
        return activation(null);
    }

    private static DeviceActivation activation(DeviceSignals signals) {
        return new DeviceActivation(0, null, Arrays.asList((DeviceQueue) null), signals);
    }
}
