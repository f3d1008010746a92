package io.kickplug.guest.fio;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kickplug.blk.testkit.ForwardingBackend;
import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * fio jobs through the real stack: the guest engine's vCPUs and virtio_blk driver, the virtio-mmio
 * transport, split virtqueues, the virtio-blk device and a memory backend, attached by the disk registry.
 */
class FioEndToEndTest {

    private static final long DISK = 16L << 20;

    /** When armed, flips one byte of the backend right before the device reads that offset. */
    private final AtomicBoolean armed = new AtomicBoolean();
    private volatile long victim = -1;
    private volatile BlockBackend backend;

    private final BackendFactory memory = new BackendFactory() {
        private final MemoryBackendFactory inner = new MemoryBackendFactory();

        @Override
        public String kind() {
            return inner.kind();
        }

        @Override
        public BlockBackend open(BackendSpec spec) throws IOException {
            BlockBackend real = inner.open(spec);
            backend = real;
            // Forwards everything; a read of the victim offset first corrupts one byte behind the device's back.
            return new ForwardingBackend(real) {
                @Override
                public void read(long offset, ByteBuffer[] dst) throws IOException {
                    if (offset == victim && armed.compareAndSet(true, false)) {
                        flipByte(offset + 100);
                    }
                    super.read(offset, dst);
                }
            };
        }
    };

    private final DiskRegistry disks = new DiskRegistry(new TransportFactoryComponent(new VirtqueueFactoryComponent()), new IoThreadFactoryComponent(),
            new GuestMemoryFactoryComponent(), () -> List.of(memory));
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();
    private final VirtqueueFactoryComponent virtqueues = new VirtqueueFactoryComponent();

    @AfterEach
    void tearDown() {
        disks.close();
    }

    private void attach(String name, int queues) {
        attach(name, queues, TransportKind.MMIO);
    }

    private void attach(String name, int queues, TransportKind transport) {
        disks.attach(new DiskSpec(name, new BackendSpec("memory", null, DISK, false), transport, queues,
                DiskSpec.DEFAULT_QUEUE_SIZE, 1, null, DiskSpec.DEFAULT_GUEST_MEMORY));
    }

    private void flipByte(long offset) throws IOException {
        ByteBuffer one = ByteBuffer.allocate(512);
        long sector = offset - offset % 512;
        backend.read(sector, new ByteBuffer[] {one});
        one.put((int) (offset - sector), (byte) (one.get((int) (offset - sector)) ^ 0x40));
        one.clear();
        backend.write(sector, new ByteBuffer[] {one});
    }

    private String fio(String disk, List<String> args) {
        return Fio.run(engine, disks.port(disk), virtqueues, disk, Fio.parse(args),
                () -> disks.ioThreadCpuNanos(disk));
    }

    @Test
    void seed000JobFileRunsUnchangedOnFourVcpus(@TempDir Path dir) throws IOException {
        attach("vdc", 1);
        engine.configure(new GuestSettings(4, MachineConfig.DEFAULT_EXIT_LATENCY_NS,
                MachineConfig.DEFAULT_INJECT_LATENCY_NS, "outside-lock"));
        Path jobFile = dir.resolve("seed000.fio");
        Files.writeString(jobFile, JobParsingTest.seed000());
        String text = fio("vdc", List.of(jobFile.toString()));
        assertTrue(text.contains("guest: disk=vdc (16.0MiB), vcpus=4, queues=1, exit latency=5000 ns, "
                + "inject latency=2000 ns, kick policy=outside-lock"), text);
        assertTrue(text.contains("f1: (groupid=0, jobs=4): err= 0: pid="), text);
        assertTrue(text.contains("  read: IOPS="), text);
        assertTrue(text.contains("clat percentiles"), text);
        assertTrue(text.contains("Run status group 0 (all jobs):"), text);
        // Each job reads the whole disk once: 4 x 16 MiB, unless the 10 s timeout ends it first.
        String json = fio("vdc", List.of(jobFile.toString(), "--output-format=json"));
        JsonNode job = new ObjectMapper().readTree(json).get("jobs").get(0);
        long ios = job.get("read").get("total_ios").asLong();
        assertTrue(ios > 0 && ios <= 4 * DISK / 4096, "" + ios);
        assertEquals(4, job.get("job options").get("numjobs").asInt());
        assertTrue(job.get("read").get("clat_ns").get("percentile").get("99.000000").asLong() > 0);
        assertEquals(0, job.get("error").asInt());
    }

    @ParameterizedTest
    @EnumSource(value = TransportKind.class, names = {"MMIO", "PCI"})
    void verifyThenFourJobsOnTwoQueuesRunOnEitherTransport(TransportKind kind) throws IOException {
        attach("d1", 2, kind);
        assertEquals(kind, disks.info("d1").transport());
        engine.configure(new GuestSettings(4, 1000, 500, "outside-lock"));
        String verify = fio("d1", List.of("--name=v", "--rw=randwrite", "--verify=crc32c", "--bs=4k", "--size=2m",
                "--iodepth=16", "--ioengine=libaio"));
        assertTrue(verify.contains("v: (groupid=0, jobs=1): err= 0: "), verify);
        String json = fio("d1", List.of("--name=r", "--rw=randread", "--bs=4k", "--size=2m", "--iodepth=16",
                "--numjobs=4", "--ioengine=libaio", "--output-format=json"));
        JsonNode root = new ObjectMapper().readTree(json);
        assertEquals(2, root.get("kickplug").get("queues").asInt(), json);
        long ios = 0;
        for (JsonNode job : root.get("jobs")) {
            assertEquals(0, job.get("error").asInt());
            ios += job.get("read").get("total_ios").asLong();
        }
        assertEquals(4 * (2L << 20) / 4096, ios);
        assertTrue(root.get("kickplug").get("interrupts").asLong() > 0);
    }

    @Test
    void commandLineOptionsRunAndCountExactly() throws IOException {
        attach("d1", 2);
        engine.configure(new GuestSettings(2, 1000, 1000, "under-lock"));
        String json = fio("d1", List.of("--name=w", "--rw=write", "--bs=64k", "--size=4m", "--iodepth=8",
                "--ioengine=libaio", "--output-format=json"));
        JsonNode root = new ObjectMapper().readTree(json);
        assertEquals("under-lock", root.get("kickplug").get("kick_policy").asText());
        JsonNode write = root.get("jobs").get(0).get("write");
        assertEquals(4L << 20, write.get("io_bytes").asLong());
        assertEquals(64, write.get("total_ios").asLong());
        assertTrue(root.get("kickplug").get("notifies").asLong() > 0);
    }

    @Test
    void randwriteVerifyPasses() {
        attach("d1", 1);
        String text = fio("d1", List.of("--name=v", "--rw=randwrite", "--verify=crc32c", "--bs=4k", "--size=2m",
                "--iodepth=16", "--ioengine=libaio", "--numjobs=1"));
        assertTrue(text.contains("v: (groupid=0, jobs=1): err= 0: "), text);
        assertTrue(text.contains("  write: IOPS="), text);
        assertTrue(text.contains("  read: IOPS="), text);
        // Issue 5: CPU accounting per device I/O thread (thread CPU time over the run).
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("device I/O threads: cpu=([0-9.]+) ms").matcher(text);
        assertTrue(m.find(), text);
        assertTrue(Double.parseDouble(m.group(1)) > 0, "the I/O thread served every request: " + text);
    }

    @Test
    void byteFlippedInTheBackendBetweenWriteAndVerifyFailsTheRunWithItsOffset() {
        attach("d1", 1);
        victim = 37 * 4096L;
        armed.set(true); // a write job reads only in its verify phase, after all its writes completed
        FioFailedException e = assertThrows(FioFailedException.class, () -> fio("d1", List.of("--name=v",
                "--rw=randwrite", "--verify=crc32c", "--bs=4k", "--size=1m", "--iodepth=8", "--ioengine=libaio")));
        String first = e.getMessage().lines().findFirst().orElseThrow();
        assertTrue(first.startsWith("fio failed: job 'v': crc32c: verify failed at file d1 offset " + victim
                + ", length 4096"), first);
        assertTrue(e.getMessage().contains("err=84"), e.getMessage());
        assertFalse(armed.get(), "the flip happened");
    }

    @Test
    void readVerifyRunFindsABlockCorruptedAfterAnEarlierWriteRun() throws IOException {
        attach("d1", 1);
        fio("d1", List.of("--name=w", "--rw=write", "--verify=md5", "--bs=8k", "--size=1m", "--iodepth=4",
                "--ioengine=libaio"));
        assertTrue(fio("d1", List.of("--name=r", "--rw=randread", "--verify=md5", "--bs=8k", "--size=1m",
                "--iodepth=4", "--ioengine=libaio")).contains("err= 0"));
        flipByte(5 * 8192L + 3000);
        FioFailedException e = assertThrows(FioFailedException.class, () -> fio("d1", List.of("--name=r",
                "--rw=read", "--verify=md5", "--bs=8k", "--size=1m", "--ioengine=psync")));
        assertTrue(e.getMessage().startsWith("fio failed: job 'r': md5: verify failed at file d1 offset 40960, "
                + "length 8192"), e.getMessage());
    }

    @Test
    void badDiskAndOversizedJobAreOneLineErrors() {
        attach("d1", 1);
        DiskException missing = assertThrows(DiskException.class, () -> disks.port("nope"));
        assertFalse(missing.getMessage().contains("\n"));
        FioOptionException big = assertThrows(FioOptionException.class,
                () -> fio("d1", List.of("--rw=read", "--size=32m")));
        assertEquals("job 'fio': size 33554432 is larger than disk 'd1' (16777216 bytes)", big.getMessage());
    }
}
