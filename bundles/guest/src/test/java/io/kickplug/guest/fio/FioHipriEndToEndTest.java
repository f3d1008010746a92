package io.kickplug.guest.fio;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** fio's {@code hipri=1} through the real stack on a memory disk: completions are reaped by polling. */
class FioHipriEndToEndTest {

    private static final long DISK = 16L << 20;

    private final DiskRegistry disks = new DiskRegistry(new TransportFactoryComponent(new VirtqueueFactoryComponent()), new IoThreadFactoryComponent(),
            new GuestMemoryFactoryComponent(), () -> List.of(new MemoryBackendFactory()));
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();

    @AfterEach
    void tearDown() {
        disks.close();
    }

    private void attach(int queues) {
        disks.attach(new DiskSpec("d1", new BackendSpec("memory", null, DISK, false), TransportKind.MMIO, queues,
                DiskSpec.DEFAULT_QUEUE_SIZE, 1, null, DiskSpec.DEFAULT_GUEST_MEMORY));
    }

    private JsonNode fio(String... args) throws IOException {
        List<String> all = new java.util.ArrayList<>(List.of(args));
        all.add("--output-format=json");
        return new ObjectMapper().readTree(Fio.run(engine, disks.port("d1"), new VirtqueueFactoryComponent(), "d1",
                Fio.parse(all)));
    }

    @Test
    void pvsync2HipriWritesAndVerifiesByPollingTheNormalQueue() throws IOException {
        attach(1);
        engine.configure(new GuestSettings(1, 1000, 1000, "outside-lock"));
        JsonNode root = fio("--name=p", "--rw=randwrite", "--bs=4k", "--size=2m", "--ioengine=pvsync2", "--hipri=1",
                "--verify=crc32c");
        JsonNode job = root.get("jobs").get(0);
        assertEquals(0, job.get("error").asInt());
        assertEquals(512, job.get("write").get("total_ios").asLong());
        assertEquals(512, job.get("read").get("total_ios").asLong(), "the verify pass read everything back");
        // Toggling mode: callbacks off while each polled request is in flight, so the completions were reaped
        // by polling: interrupt-driven I/O would take about one interrupt per request here.
        QueueCounters q0 = disks.counters("d1").get(0);
        assertEquals(1024, q0.requests());
        assertTrue(root.get("kickplug").get("interrupts").asLong() * 100 < 1024, root.get("kickplug") + " " + q0);
        assertTrue(q0.interruptsSent() * 100 < 1024, q0.toString());
    }

    @Test
    void ioUringHipriOnPollQueuesNeverInterrupts() throws IOException {
        attach(2);
        engine.configure(new GuestSettings(2, 1000, 1000, "outside-lock", 1)); // Linux: queues <= vCPUs
        JsonNode root = fio("--name=u", "--rw=randread", "--bs=4k", "--size=4m", "--ioengine=io_uring",
                "--iodepth=16", "--hipri=1");
        JsonNode job = root.get("jobs").get(0);
        assertEquals(0, job.get("error").asInt());
        assertEquals(1024, job.get("read").get("total_ios").asLong());
        assertEquals(2, root.get("kickplug").get("queues").asInt());
        assertEquals(0, root.get("kickplug").get("interrupts").asLong());
        List<QueueCounters> counters = disks.counters("d1");
        assertEquals(0, counters.get(0).requests(), "hipri I/O skips the interrupt-driven queue");
        assertEquals(1024, counters.get(1).requests());
        assertTrue(counters.get(1).interruptsSent() <= 1, counters.get(1).toString());
    }

    @Test
    void libaioStillRefusesHipriAsFioDoes() {
        attach(1);
        assertEquals("job 'x': hipri is an option of io_uring and pvsync2, not of ioengine=libaio",
                assertThrows(FioOptionException.class, () -> fio("--name=x", "--size=1m", "--ioengine=libaio",
                        "--hipri=1")).getMessage());
    }
}
