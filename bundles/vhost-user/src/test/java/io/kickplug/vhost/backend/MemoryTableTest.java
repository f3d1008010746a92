package io.kickplug.vhost.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Regions mapped from descriptors, address translation and overlap checks. */
class MemoryTableTest {

    @TempDir
    Path dir;

    @Test
    void aRegionOver2GiBIsMappedInChunksAndAccessibleAcrossTheirBoundary() throws Exception {
        long size = 3L << 30; // sparse: nothing is allocated until touched
        Path file = dir.resolve("big");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(size);
            MemoryTable table = new MemoryTable();
            MemoryTable.Region r = MemoryTable.map(dupOf(raf), 1L << 32, size, 0x7f00_0000_0000L, 0);
            assertEquals(3, r.chunks().size(), "1 GiB chunks");
            table.add(r);
            GuestMemory mem = table.build(new GuestMemoryFactoryComponent());
            long boundary = (1L << 32) + (1L << 30) - 4;
            mem.writeU64(boundary, 0x1122334455667788L);
            assertEquals(0x1122334455667788L, mem.readU64(boundary), "an access across two chunks");
            // The front-end's virtual addresses translate into the same region.
            assertEquals(boundary, table.translate(0x7f00_0000_0000L + (1L << 30) - 4, 8));
            assertEquals(-1, table.translate(0x7f00_0000_0000L + size - 4, 8), "crosses the region's end");
        }
    }

    @Test
    void overlapChecksBothAddressSpaces() {
        List<MemoryTable.Region> existing = List.of(new MemoryTable.Region(0x1000, 0x1000, 0x10000, 0, List.of()));
        assertNotNull(MemoryTable.overlap(existing, 0x1fff, 0x10, 0x90000), "guest addresses");
        assertNotNull(MemoryTable.overlap(existing, 0x9000, 0x10, 0xfff1), "user addresses");
        assertNull(MemoryTable.overlap(existing, 0x2000, 0x1000, 0x11000), "adjacent is fine");
        assertNotNull(MemoryTable.checkShape(-0x1000, 0x2000, 0, 0), "wraps past 2^64");
        assertNotNull(MemoryTable.checkShape(0, 0, 0, 0), "empty");
        assertNotNull(MemoryTable.checkShape(0, 0x1000, 0, Long.MAX_VALUE), "offset beyond any file");
    }

    /** A descriptor the table may close: MemoryTable.map closes what it is given. */
    private static java.io.FileDescriptor dupOf(RandomAccessFile raf) throws Exception {
        return new RandomAccessFile("/proc/self/fd/" + io.kickplug.vhost.protocol.Fds.number(raf.getFD()), "rw")
                .getFD();
    }
}
