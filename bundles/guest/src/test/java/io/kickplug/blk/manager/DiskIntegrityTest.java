package io.kickplug.blk.manager;

import io.kickplug.blk.testkit.InProcessHost;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.blk.fake.PatternIo;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Data integrity through the whole stack the disk manager builds: a guest writes a pattern over a disk
 * with 4 queues on 2 I/O threads and reads it back, also across detach and re-attach of a file.
 */
class DiskIntegrityTest {

    private static final int SIZE = 1 << 20;
    private static final int BLOCK = 4096;

    private final DiskRegistry registry = InProcessHost.registry();

    @TempDir
    Path dir;

    @AfterEach
    void tearDown() {
        registry.close();
    }

    private RawRingGuest guest(String name) {
        return new RawRingGuest(registry.port(name)).init(-1L, 4, 64);
    }

    private static DiskSpec fourQueuesOnTwoThreads(DiskSpec spec, TrackedLockKind lock) {
        return spec.withQueues(4, 64).withIoThreads(2, List.of(List.of(0, 2), List.of(1, 3))).withTrackedLock(lock)
                .withWorkers(4);
    }

    @Test
    void memoryDiskWithFourQueuesOnTwoIoThreads() throws Exception {
        registry.attach(fourQueuesOnTwoThreads(DiskSpec.memory("m", SIZE), TrackedLockKind.SHARDED));
        RawRingGuest guest = guest("m");
        PatternIo.write(guest, 4, SIZE / BLOCK, BLOCK, 8, 1);
        assertEquals(List.of(), PatternIo.verify(guest, 4, SIZE / BLOCK, BLOCK, 8, 1));
    }

    @Test
    void fileDiskSurvivesDetachAndReattach() throws Exception {
        Path image = dir.resolve("disk.img");
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(SIZE);
        }
        DiskSpec spec = fourQueuesOnTwoThreads(DiskSpec.file("f", image.toString(), false), TrackedLockKind.YIELDING);
        DiskInfo info = registry.attach(spec);
        assertEquals(image.toString(), info.path());
        assertEquals(List.of(List.of(0, 2), List.of(1, 3)), info.mapping());
        assertEquals(TrackedLockKind.YIELDING, info.trackedLock());
        RawRingGuest guest = guest("f");
        PatternIo.write(guest, 4, SIZE / BLOCK, BLOCK, 8, 2);
        assertTrue(Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName()
                .startsWith("kickplug-blk-f-worker")), "the file backend blocks: its calls go to the disk's workers");
        assertEquals(List.of(), PatternIo.verify(guest, 4, SIZE / BLOCK, BLOCK, 8, 2));
        registry.detach("f");
        // The bytes are in the file itself.
        byte[] onDisk = Files.readAllBytes(image);
        assertEquals(SIZE, onDisk.length, "the image is never resized by I/O");
        byte[] block7 = java.util.Arrays.copyOfRange(onDisk, 7 * BLOCK, 8 * BLOCK);
        assertTrue(java.util.Arrays.equals(PatternIo.block(2, 7, BLOCK), block7));

        registry.attach(spec.withTrackedLock(TrackedLockKind.MUTEX));
        RawRingGuest again = guest("f");
        assertEquals(List.of(), PatternIo.verify(again, 4, SIZE / BLOCK, BLOCK, 8, 2));
    }

    @Test
    void trackedLockSwitchIsReportedAndUnknownDisksAreRefused() {
        registry.attach(DiskSpec.memory("d", SIZE));
        assertEquals(TrackedLockKind.MUTEX, registry.info("d").trackedLock());
        assertEquals(TrackedLockKind.SHARDED, registry.setTrackedLock("d", TrackedLockKind.SHARDED).trackedLock());
        assertEquals(TrackedLockKind.SHARDED, registry.list().get(0).trackedLock());
        assertEquals("no disk named 'x'",
                assertThrows(DiskException.class, () -> registry.setTrackedLock("x", TrackedLockKind.MUTEX))
                        .getMessage());
    }

    @Test
    void badMappingOrWorkersAttachNothing() {
        DiskSpec spec = DiskSpec.memory("bad", SIZE).withQueues(4, 64);
        assertEquals("queue mapping leaves queue 3 without an I/O thread",
                assertThrows(DiskException.class, () -> registry.attach(spec.withIoThreads(2,
                        List.of(List.of(0, 1), List.of(2))))).getMessage());
        assertEquals("queue mapping has entries for 2 I/O threads, but the disk has 1",
                assertThrows(DiskException.class, () -> registry.attach(spec.withIoThreads(1,
                        List.of(List.of(0, 1), List.of(2, 3))))).getMessage());
        assertEquals("number of workers 0 is not in 1..256",
                assertThrows(DiskException.class, () -> registry.attach(spec.withWorkers(0))).getMessage());
        assertEquals(List.of(), registry.list());
    }

    @Test
    void diskFromConfigurationProperties() throws Exception {
        DiskSpec spec = DiskConfig.toSpec(Map.of("name", "cfg", "backend", "null", "size", "1M", "queues", "4",
                "iothreads", 2, "mapping", "0,1;2,3", "tracked.lock", "sharded"));
        DiskInfo info = registry.attach(spec);
        assertEquals(new DiskInfo("cfg", SIZE, "null", false, TransportKind.MMIO, 4, 256, 2, 0, 0, 0, null,
                List.of(List.of(0, 1), List.of(2, 3)), TrackedLockKind.SHARDED), info);
        assertEquals(new BackendSpec("null", null, SIZE, false, false), spec.backend());
    }
}
