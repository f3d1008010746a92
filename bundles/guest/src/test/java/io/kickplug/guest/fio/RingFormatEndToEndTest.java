package io.kickplug.guest.fio;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.guest.GuestWorkloadsComponent;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A disk's ring format end to end (VIRTIO 1.2 sections 2.7 and 2.8): the disk offers VIRTIO_F_RING_PACKED or
 * not, the simulated guest's driver negotiates it and drives the rings of that format through virtio-mmio and
 * virtio-pci; fio randwrite with verify, then randread on four vCPUs, and the write-read-verify pass.
 */
class RingFormatEndToEndTest {
    private static final long DISK = 4L << 20;
    private final VirtqueueFactory rings =
            RingSelector.of(new VirtqueueFactoryComponent(), new PackedVirtqueueFactoryComponent());
    private final DiskRegistry disks = new DiskRegistry(new TransportFactoryComponent(rings),
            new IoThreadFactoryComponent(), new GuestMemoryFactoryComponent(),
            () -> List.of(new io.kickplug.blk.backend.MemoryBackendFactory()));
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();

    static Stream<Arguments> cases() {
        return Stream.of(TransportKind.MMIO, TransportKind.PCI)
                .flatMap(t -> Arrays.stream(RingFormat.values()).map(r -> Arguments.of(t, r)));
    }

    @AfterEach
    void tearDown() {
        disks.close();
    }

    private void attach(String name, TransportKind transport, RingFormat ring) {
        disks.attach(new DiskSpec(name, new BackendSpec("memory", null, DISK, false), transport, 2,
                DiskSpec.DEFAULT_QUEUE_SIZE, 1, List.of(), null, null, DiskSpec.DEFAULT_WORKERS,
                DiskSpec.DEFAULT_GUEST_MEMORY, ring));
    }

    private String fio(String disk, String... args) {
        return Fio.run(engine, disks.port(disk), rings, disk, Fio.parse(List.of(args)),
                () -> disks.ioThreadCpuNanos(disk));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void fioVerifyThenRandreadOnEitherRing(TransportKind transport, RingFormat ring) throws IOException {
        attach("d1", transport, ring);
        assertEquals(ring, disks.info("d1").ring());
        engine.configure(new GuestSettings(4, 1000, 500, "outside-lock"));
        String verify = fio("d1", "--name=v", "--rw=randwrite", "--verify=crc32c", "--bs=4k", "--size=2m",
                "--iodepth=16", "--ioengine=libaio");
        assertTrue(verify.contains("v: (groupid=0, jobs=1): err= 0: "), verify);
        String json = fio("d1", "--name=r", "--rw=randread", "--bs=4k", "--size=2m", "--iodepth=16", "--numjobs=4",
                "--ioengine=libaio", "--output-format=json");
        JsonNode root = new ObjectMapper().readTree(json);
        long ios = 0;
        for (JsonNode job : root.get("jobs")) {
            assertEquals(0, job.get("error").asInt());
            ios += job.get("read").get("total_ios").asLong();
        }
        assertEquals(4 * (2L << 20) / 4096, ios);
        // The device offered the ring's feature and the guest accepted it (section 2.2).
        long negotiated = negotiated("d1");
        assertEquals(ring == RingFormat.PACKED, (negotiated & VirtioFeatures.RING_PACKED) != 0,
                "negotiated 0x" + Long.toHexString(negotiated));
    }

    /** The features the last driver negotiated, read back through the transport's driver-feature window. */
    private long negotiated(String disk) {
        // A write-read pass leaves the device reset; boot a driver and read what it negotiated.
        var machine = engine.boot(disks.port(disk), rings, io.kickplug.guest.engine.MachineConfig.defaults("probe"));
        try {
            return machine.features();
        } finally {
            machine.close();
        }
    }

    @Test
    void writeReadVerifyPassOnPackedRings() {
        attach("p1", TransportKind.MMIO, RingFormat.PACKED);
        IoPassResult r = new GuestWorkloadsComponent(disks, rings).writeReadVerify("p1",
                new IoPassOptions(4096, 32, 0));
        assertEquals(0, r.mismatches());
        assertEquals(2 * DISK / 4096, r.requests());
    }
}
