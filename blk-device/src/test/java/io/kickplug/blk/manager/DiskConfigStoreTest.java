package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.transport.TransportKind;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What kp:attach writes as a configuration is what the configuration component attaches again. */
class DiskConfigStoreTest {

    @Test
    void propertiesRoundTripToTheSameSpec() {
        List<DiskSpec> specs = List.of(
                DiskSpec.memory("m", 64L << 20),
                DiskSpec.memory("q", 1L << 30).withQueues(4, 128).withTransport(TransportKind.PCI)
                        .withIoThreads(2, List.of(List.of(0, 2), List.of(1, 3))).withSerial("SER-1")
                        .withTrackedLock(TrackedLockKind.SHARDED).withWorkers(3),
                DiskSpec.memory("r", 1L << 20).withRing(io.kickplug.api.virtio.RingFormat.PACKED),
                DiskSpec.memory("e", 1L << 20).withAvailEvent(io.kickplug.api.virtio.AvailEventMode.POP),
                DiskSpec.file("f", "/var/tmp/disk.img", true),
                DiskSpec.memory("n", 4096).withBackend(new BackendSpec("null", null, 1L << 40, false, false)),
                DiskSpec.file("d", "/var/tmp/x.img", false).withBackend(new BackendSpec("file", "/var/tmp/x.img",
                        1L << 20, false, true)));
        for (DiskSpec spec : specs) {
            assertEquals(spec, DiskConfig.toSpec(DiskConfigStore.toProperties(spec)), spec.name());
        }
    }
}
