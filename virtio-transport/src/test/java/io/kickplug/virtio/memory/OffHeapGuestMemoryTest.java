package io.kickplug.virtio.memory;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.memory.AddressOverflowException;
import io.kickplug.api.memory.InvalidGuestAddressException;
import io.kickplug.api.memory.MemoryRegion;
import io.kickplug.api.memory.PartialBufferException;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

class OffHeapGuestMemoryTest {

    @Test
    void littleEndianAccessorsRoundTrip() {
        OffHeapGuestMemory m = OffHeapGuestMemory.allocate(4096);
        m.writeU64(8, 0x0102030405060708L);
        assertEquals(0x08, m.readU8(8));
        assertEquals(0x0708, m.readU16(8));
        assertEquals(0x05060708, m.readU32(8));
        assertEquals(0x0102030405060708L, m.readU64(8));
        m.writeU16Release(100, (short) 0xbeef);
        assertEquals((short) 0xbeef, m.readU16Acquire(100));
        m.writeU32Release(104, 0xcafebabe);
        assertEquals(0xcafebabe, m.readU32Acquire(104));
    }

    /** The one-buffer fast path (a single region in one chunk) checks exactly what the region search checks. */
    @Test
    void singleRegionAwayFromZeroChecksBothEnds() {
        OffHeapGuestMemory m = OffHeapGuestMemory.allocate(List.of(new MemoryRegion(0x10000, 4096)), 30);
        m.writeU64(0x10000 + 4088, 0x1122334455667788L);
        assertEquals(0x1122334455667788L, m.readU64(0x10000 + 4088));
        assertEquals((short) 0x1122, m.readU16Acquire(0x10000 + 4094));
        assertEquals(0x11, m.readU8(0x10000 + 4095));
        assertThrows(InvalidGuestAddressException.class, () -> m.readU16(0x10000 - 2));
        assertThrows(InvalidGuestAddressException.class, () -> m.readU8(0x10000 - 1));
        assertThrows(InvalidGuestAddressException.class, () -> m.writeU32(0x10000 + 4096, 1));
        assertThrows(PartialBufferException.class, () -> m.readU32(0x10000 + 4094));
        assertThrows(PartialBufferException.class, () -> m.writeU64(0x10000 + 4089, 1));
        assertTrue(m.isValidRange(0x10000, 4096));
        assertFalse(m.isValidRange(0x10000, 4097));
        assertFalse(m.isValidRange(0x10000 - 1, 2));
        assertFalse(m.isValidRange(0x10000 + 4095, Long.MAX_VALUE));
        // A region smaller than the widest access takes the checked path: nothing wraps.
        OffHeapGuestMemory tiny = OffHeapGuestMemory.allocate(List.of(new MemoryRegion(64, 4)), 30);
        tiny.writeU32(64, 7);
        assertEquals(7, tiny.readU32(64));
        assertThrows(PartialBufferException.class, () -> tiny.readU64(64));
        assertThrows(InvalidGuestAddressException.class, () -> tiny.readU16(68));
    }

    @Test
    void addressOutsideEveryRegionIsInvalid() {
        OffHeapGuestMemory m = OffHeapGuestMemory.allocate(4096);
        InvalidGuestAddressException e = assertThrows(InvalidGuestAddressException.class, () -> m.readU32(4096));
        assertEquals(4096, e.address());
        assertThrows(InvalidGuestAddressException.class, () -> m.writeU8(-1L, (byte) 1));
    }

    @Test
    void rangeRunningPastTheEndIsPartial() {
        OffHeapGuestMemory m = OffHeapGuestMemory.allocate(4096);
        PartialBufferException e = assertThrows(PartialBufferException.class, () -> m.readU64(4092));
        assertEquals(8, e.expected());
        assertEquals(4, e.completed());
        assertThrows(PartialBufferException.class, () -> m.read(4000, new byte[200], 0, 200));
        assertFalse(m.isValidRange(4000, 97));
        assertTrue(m.isValidRange(4000, 96));
    }

    @Test
    void addressPlusLengthPast2To64Overflows() {
        OffHeapGuestMemory m = OffHeapGuestMemory.allocate(4096);
        assertThrows(AddressOverflowException.class, () -> m.checkRange(0xffff_ffff_ffff_fff0L, 0x20));
        assertThrows(AddressOverflowException.class, () -> m.checkRange(16, -1));
        assertFalse(m.isValidRange(-16, 32));
    }

    @Test
    void failedAccessTouchesNothing() {
        OffHeapGuestMemory m = OffHeapGuestMemory.allocate(4096);
        byte[] ones = new byte[16];
        java.util.Arrays.fill(ones, (byte) 1);
        assertThrows(PartialBufferException.class, () -> m.write(4090, ones, 0, 16));
        for (long a = 4090; a < 4096; a++) {
            assertEquals(0, m.readU8(a));
        }
    }

    @Test
    void accessesCrossChunkBoundaries() {
        // 16-byte chunks make every multi-byte access near a boundary cross one.
        OffHeapGuestMemory m = OffHeapGuestMemory.allocate(List.of(new MemoryRegion(0, 64)), 4);
        m.writeU64(12, 0x1122334455667788L);
        assertEquals(0x1122334455667788L, m.readU64(12));
        m.writeU16Release(15, (short) 0x1234);
        assertEquals(0x1234, m.readU16Acquire(15));
        byte[] src = new byte[40];
        for (int i = 0; i < src.length; i++) {
            src[i] = (byte) i;
        }
        m.write(5, src, 0, 40);
        byte[] dst = new byte[40];
        m.read(5, dst, 0, 40);
        assertArrayEquals(src, dst);
        ByteBuffer[] views = m.views(5, 40);
        assertEquals(3, views.length); // 5..16, 16..32, 32..45
        assertEquals(40, java.util.Arrays.stream(views).mapToInt(ByteBuffer::remaining).sum());
    }

    @Test
    void adjacentRegionsFormOneRangeAndGapsAreInvalid() {
        OffHeapGuestMemory m = OffHeapGuestMemory.allocate(
                List.of(new MemoryRegion(0, 4096), new MemoryRegion(4096, 4096), new MemoryRegion(0x10000, 4096)), 30);
        m.writeU64(4092, -1L);
        assertEquals(-1L, m.readU64(4092));
        assertTrue(m.isValidRange(0, 8192));
        assertThrows(PartialBufferException.class, () -> m.checkRange(4096, 8192));
        assertThrows(InvalidGuestAddressException.class, () -> m.readU8(0x9000));
        assertEquals(0, m.readU8(0x10000));
        assertEquals(3 * 4096, m.totalSize());
    }

    @Test
    void overlappingRegionsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> OffHeapGuestMemory.allocate(
                List.of(new MemoryRegion(0, 4096), new MemoryRegion(4000, 4096)), 30));
    }

    @Test
    void fillAndByteBufferCopies() {
        OffHeapGuestMemory m = OffHeapGuestMemory.allocate(List.of(new MemoryRegion(0x1000, 256)), 5);
        m.fill(0x1000 + 10, 100, (byte) 0x5a);
        ByteBuffer dst = ByteBuffer.allocate(102);
        m.read(0x1000 + 9, dst);
        dst.flip();
        assertEquals(0, dst.get(0));
        assertEquals(0x5a, dst.get(1));
        assertEquals(0x5a, dst.get(100));
        assertEquals(0, dst.get(101));
        ByteBuffer src = ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9});
        m.write(0x1000 + 30, src);
        assertEquals(0, src.remaining());
        assertEquals(9, m.readU8(0x1000 + 38));
    }

    /** A disk's 64 MiB of simulated-guest memory costs resident memory only where it is touched. */
    @Test
    void allocatedMemoryIsZeroedAndResidentOnlyWhereTouched() throws Exception {
        long before = rssKb();
        OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(64L << 20);
        for (long a = 0; a < (64L << 20); a += 16L << 20) {
            assertEquals(0L, mem.readU64(a + 8), "zeroed at " + a);
        }
        mem.writeU64(4096, 0x1122334455667788L);
        assertEquals(0x1122334455667788L, mem.readU64(4096));
        long grown = rssKb() - before;
        if (java.nio.file.Files.isDirectory(java.nio.file.Path.of("/dev/shm"))) {
            org.junit.jupiter.api.Assertions.assertTrue(grown < 16 * 1024,
                    "resident memory grew by " + grown + " KiB for 64 MiB of which a few pages were touched");
        }
    }

    private static long rssKb() throws java.io.IOException {
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        return 0;
    }
}
