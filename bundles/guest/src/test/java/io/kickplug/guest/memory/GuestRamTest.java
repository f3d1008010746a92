package io.kickplug.guest.memory;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.memory.MemoryRegion;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import java.util.List;
import org.junit.jupiter.api.Test;

class GuestRamTest {

    @Test
    void allocationsAreAlignedAndDisjoint() {
        GuestRam ram = new GuestRam(OffHeapGuestMemory.allocate(4096));
        assertEquals(0, ram.allocate(1, 1));
        assertEquals(16, ram.allocate(16, 16));
        assertEquals(32, ram.allocate(1, 1));
        assertEquals(64, ram.allocate(100, 64));
        assertEquals(118, ram.allocated());
    }

    @Test
    void exhaustionIsAClearError() {
        GuestRam ram = new GuestRam(OffHeapGuestMemory.allocate(4096));
        ram.allocate(4000, 16);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ram.allocate(200, 16));
        assertEquals("guest memory exhausted: cannot allocate 200 bytes after 4000 of 4096 bytes were used",
                e.getMessage());
        assertEquals(4000, ram.allocate(96, 16), "what still fits is handed out");
    }

    @Test
    void movesOnToTheNextRegionWhenOneIsFull() {
        GuestRam ram = new GuestRam(OffHeapGuestMemory.allocate(
                List.of(new MemoryRegion(0x1000, 0x100), new MemoryRegion(0x10000, 0x1000)),
                OffHeapGuestMemory.DEFAULT_CHUNK_SHIFT));
        assertEquals(0x1000, ram.allocate(0xC0, 16));
        assertEquals(0x10000, ram.allocate(0x80, 16), "0x80 bytes do not fit in the 0x40 left");
        assertEquals(0x10080, ram.allocate(0x10, 16));
        assertTrue(ram.memory().isValidRange(0x10080, 0x10));
    }

    @Test
    void rejectsBadArguments() {
        GuestRam ram = new GuestRam(OffHeapGuestMemory.allocate(4096));
        assertThrows(IllegalArgumentException.class, () -> ram.allocate(0, 1));
        assertThrows(IllegalArgumentException.class, () -> ram.allocate(8, 3));
    }
}
