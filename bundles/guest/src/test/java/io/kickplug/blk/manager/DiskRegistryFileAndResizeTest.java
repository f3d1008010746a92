package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.guest.virtio.RawRingGuest.Completed;
import io.kickplug.blk.fake.DiscardSegments;
import io.kickplug.blk.testkit.InProcessHost;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** File-backed and resized disks, driven by a simulated guest through virtio-mmio. */
class DiskRegistryFileAndResizeTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final long ALL = -1L;
    /** The config-change bit of the MMIO InterruptStatus register (section 4.2.2). */
    private static final int CONFIG_INTERRUPT = 2;

    private final DiskRegistry registry = InProcessHost.registry();
    private Path dir;

    @BeforeEach
    void createDir() throws IOException {
        Files.createDirectories(Path.of("target"));
        dir = Files.createTempDirectory(Path.of("target"), "disks-");
    }

    @AfterEach
    void tearDown() throws IOException {
        registry.close();
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static byte[] random(int length, long seed) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    /** Writes {@code content} to {@code name}.img in the test's directory and attaches it as file disk {@code name}. */
    private Path attachFile(String name, byte[] content, boolean readOnly) throws IOException {
        Path image = Files.write(image(name), content);
        registry.attach(DiskSpec.file(name, image.toString(), readOnly));
        return image;
    }

    /** The image of file disk {@code name} in the test's directory. */
    private Path image(String name) {
        return dir.resolve(name + ".img");
    }

    /** Attaches a zeroed 1 MiB file disk {@code name}; a new guest on it writes {@code data} at {@code sector}. */
    private RawRingGuest writtenFileDisk(String name, long sector, byte[] data) throws Exception {
        attachFile(name, new byte[1 << 20], false);
        RawRingGuest guest = guest(name);
        assertEquals(VirtioBlk.S_OK, write(guest, sector, data));
        return guest;
    }

    /** The status of a write of {@code data} at {@code sector}, on queue 0. */
    private static int write(RawRingGuest guest, long sector, byte[] data) throws InterruptedException {
        return guest.request(0, VirtioBlk.T_OUT, sector, data, 0, TIMEOUT).status();
    }

    /** A read of {@code bytes} at {@code sector}, on queue 0. */
    private static Completed read(RawRingGuest guest, long sector, int bytes) throws InterruptedException {
        return guest.request(0, VirtioBlk.T_IN, sector, null, bytes, TIMEOUT);
    }

    private RawRingGuest guest(String name) {
        return new RawRingGuest(registry.port(name)).init(ALL, 1, 64);
    }

    // 5.2.6.2: a read-only device fails writes with IOERR and MUST NOT write: bytes and mtime unchanged.
    @Test
    void readOnlyFileDiskLeavesTheImageUntouched() throws Exception {
        byte[] content = random(64 * 1024, 1);
        Path image = Files.write(image("ro"), content);
        FileTime past = FileTime.fromMillis(1_600_000_000_000L);
        Files.setLastModifiedTime(image, past);
        registry.attach(DiskSpec.file("ro", image.toString(), true));
        RawRingGuest guest = guest("ro");
        assertTrue((guest.features() & VirtioBlk.F_RO) != 0);
        assertEquals(0, guest.features() & (VirtioBlk.F_DISCARD | VirtioBlk.F_WRITE_ZEROES));
        assertEquals(VirtioBlk.S_IOERR, write(guest, 0, random(4096, 2)));
        // Zeroing requests are not negotiated on a read-only disk: UNSUPP, and nothing written either.
        assertEquals(VirtioBlk.S_UNSUPP, guest.request(0, VirtioBlk.T_WRITE_ZEROES, 0, DiscardSegments.one(0, 8, 0), 0,
                TIMEOUT).status());
        assertEquals(VirtioBlk.S_OK, guest.request(0, VirtioBlk.T_FLUSH, 0, null, 0, TIMEOUT).status());
        Completed read = read(guest, 0, 4096);
        assertArrayEquals(Arrays.copyOf(content, 4096), read.data());
        registry.detach("ro");
        assertArrayEquals(content, Files.readAllBytes(image));
        assertEquals(past, Files.getLastModifiedTime(image));
    }

    @Test
    void fileDiskKeepsItsDataAcrossDetachAndReattach() throws Exception {
        byte[] data = random(8192, 3);
        RawRingGuest guest = writtenFileDisk("rw", 16, data);
        assertEquals(VirtioBlk.S_OK, guest.request(0, VirtioBlk.T_FLUSH, 0, null, 0, TIMEOUT).status());
        registry.detach("rw");
        registry.attach(DiskSpec.file("rw", image("rw").toString(), false));
        Completed read = read(guest("rw"), 16, 8192);
        assertEquals(VirtioBlk.S_OK, read.status());
        assertArrayEquals(data, read.data());
    }

    // 5.2.6.2: after WRITE_ZEROES, reads of the range return zeroes (file backend, through the ring).
    @Test
    void writeZeroesThenReadOnAFileDisk() throws Exception {
        byte[] content = random(1 << 20, 4);
        attachFile("wz", content, false);
        RawRingGuest guest = guest("wz");
        assertTrue((guest.features() & VirtioBlk.F_WRITE_ZEROES) != 0);
        byte[] segments = DiscardSegments.of(2).add(2, 4, 1).add(100, 1, 0).bytes();
        assertEquals(VirtioBlk.S_OK, guest.request(0, VirtioBlk.T_WRITE_ZEROES, 0, segments, 0, TIMEOUT).status());
        Completed read = read(guest, 0, 512 * 8);
        byte[] expected = Arrays.copyOf(content, 512 * 8);
        Arrays.fill(expected, 2 * 512, 6 * 512, (byte) 0);
        assertArrayEquals(expected, read.data());
        assertArrayEquals(new byte[512], read(guest, 100, 512).data());
        // An out-of-range segment and a DISCARD with the unmap flag.
        assertEquals(VirtioBlk.S_IOERR, guest.request(0, VirtioBlk.T_WRITE_ZEROES, 0,
                DiscardSegments.one(2048, 1, 0), 0, TIMEOUT).status());
        assertEquals(VirtioBlk.S_UNSUPP, guest.request(0, VirtioBlk.T_DISCARD, 0, DiscardSegments.one(0, 1, 1), 0,
                TIMEOUT).status());
    }

    @Test
    void badFileAttachesLeaveNothingAttached() throws IOException {
        Path odd = Files.write(dir.resolve("odd.img"), new byte[700]);
        for (String path : List.of(dir.resolve("missing.img").toString(), dir.toString(), odd.toString())) {
            DiskException e = assertThrows(DiskException.class,
                    () -> registry.attach(DiskSpec.file("bad", path, false)));
            assertTrue(!e.getMessage().contains("\n"), e.getMessage());
        }
        assertEquals(List.of(), registry.list());
    }

    // 5.2.6.2: a capacity change SHOULD trigger a configuration change notification; 2.5: the generation moves.
    @Test
    void resizeNotifiesTheGuest() throws Exception {
        byte[] data = random(512, 5);
        RawRingGuest guest = writtenFileDisk("grow", 2047, data);
        Path image = image("grow");
        assertEquals(2048, guest.config(VirtioBlk.CFG_CAPACITY, 8));
        int generation = guest.configGeneration();

        assertEquals(4L << 20, registry.resize("grow", 4L << 20).sizeBytes());
        guest.awaitInterrupt(CONFIG_INTERRUPT, TIMEOUT);
        assertEquals(8192, guest.config(VirtioBlk.CFG_CAPACITY, 8));
        assertNotEquals(generation, guest.configGeneration());
        assertEquals(4L << 20, Files.size(image));
        assertArrayEquals(data, read(guest, 2047, 512).data());
        assertArrayEquals(new byte[512], read(guest, 8191, 512).data());
        guest.ackInterrupt(CONFIG_INTERRUPT);

        int before = guest.configGeneration();
        registry.resize("grow", 512 * 1024);
        guest.awaitInterrupt(CONFIG_INTERRUPT, TIMEOUT);
        assertEquals(1024, guest.config(VirtioBlk.CFG_CAPACITY, 8));
        assertNotEquals(before, guest.configGeneration());
        assertEquals(512 * 1024, Files.size(image));
        assertEquals(VirtioBlk.S_IOERR, read(guest, 2047, 512).status());
        assertEquals(512 * 1024, registry.info("grow").sizeBytes());
    }

    @Test
    void resizeErrors() throws IOException {
        registry.attach(DiskSpec.memory("m", 1 << 20));
        assertThrows(DiskException.class, () -> registry.resize("nope", 1 << 20));
        assertThrows(DiskException.class, () -> registry.resize("m", 1000));
        assertThrows(DiskException.class, () -> registry.resize("m", 0));
        assertEquals(1 << 20, registry.info("m").sizeBytes());
        Path image = attachFile("ro", new byte[4096], true);
        DiskException e = assertThrows(DiskException.class, () -> registry.resize("ro", 8192));
        assertTrue(e.getMessage().contains("read-only"), e.getMessage());
        assertEquals(4096, Files.size(image));
    }

    // A 1 TiB memory disk is sparse: it attaches and round-trips a block near its end.
    @Test
    void aTebibyteMemoryDiskAttaches() throws Exception {
        long size = 1L << 40;
        registry.attach(new DiskSpec("big", new BackendSpec("memory", null, size, false),
                io.kickplug.api.transport.TransportKind.MMIO, 1, 64, 1, null, 16L << 20));
        RawRingGuest guest = guest("big");
        assertEquals(size / 512, guest.config(VirtioBlk.CFG_CAPACITY, 8));
        byte[] data = random(4096, 6);
        long sector = size / 512 - 8;
        assertEquals(VirtioBlk.S_OK, write(guest, sector, data));
        assertArrayEquals(data, read(guest, sector, 4096).data());
    }
}
