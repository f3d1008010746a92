package io.kickplug.virtio.queue;

import static io.kickplug.virtio.testkit.RawRing.*;
import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.testkit.RawRing;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A hostile driver's rings, one attack per test. Each must end in a {@link GuestFaultException} that
 * names the broken rule, a broken queue that yields nothing more, and no access outside guest memory
 * (guest memory is 1 MiB; every out-of-range access would throw a memory exception instead).
 */
class HostileGuestQueueTest {
    private static final long FEATURES = VirtioFeatures.RING_INDIRECT_DESC | VirtioFeatures.RING_EVENT_IDX;
    private static final long MEM = 1 << 20;

    private OffHeapGuestMemory mem;
    private RawRing ring;
    private long d;

    @BeforeEach
    void setUp() {
        mem = OffHeapGuestMemory.allocate(MEM);
        ring = new RawRing(mem, 8, 0);
        d = ring.dataArea();
    }

    private GuestFaultException popFault(String section) {
        SplitDeviceQueue q = new SplitDeviceQueue(mem, 0, ring.layout(), FEATURES);
        GuestFaultException e = assertThrows(GuestFaultException.class, q::pop);
        assertEquals(section, e.section(), e.getMessage());
        assertTrue(q.isBroken());
        assertNull(q.pop(), "a broken queue yields nothing");
        assertFalse(q.hasAvailable());
        return e;
    }

    @Test
    void loopedChain() {
        ring.desc(0, d, 16, NEXT, 1).desc(1, d, 16, NEXT, 0).makeAvailable(0);
        assertTrue(popFault("2.7.5.2").getMessage().contains("loops"));
    }

    @Test
    void selfLoopInIndirectTable() {
        long table = d + 0x1000;
        ring.indirectDesc(table, 0, d, 16, NEXT, 0);
        ring.desc(0, table, 16, INDIRECT, 0).makeAvailable(0);
        popFault("2.7.5.3.1");
    }

    @Test
    void nextOutOfRange() {
        ring.desc(0, d, 16, NEXT, 8).makeAvailable(0);
        popFault("2.7.5.2");
    }

    @Test
    void headOutOfRange() {
        ring.makeAvailable(8);
        popFault("2.7.6");
    }

    @Test
    void indirectInsideIndirect() {
        long t1 = d + 0x1000;
        long t2 = d + 0x2000;
        ring.indirectDesc(t2, 0, d, 16, 0, 0);
        ring.indirectDesc(t1, 0, t2, 16, INDIRECT, 0);
        ring.desc(0, t1, 16, INDIRECT, 0).makeAvailable(0);
        popFault("2.7.5.3.1");
    }

    @Test
    void indirectTogetherWithNext() {
        long t = d + 0x1000;
        ring.indirectDesc(t, 0, d, 16, 0, 0);
        ring.desc(0, t, 16, INDIRECT | NEXT, 1).desc(1, d, 16, 0, 0).makeAvailable(0);
        popFault("2.7.5.3.1");
    }

    @Test
    void zeroLengthIndirectTable() {
        ring.desc(0, d + 0x1000, 0, INDIRECT, 0).makeAvailable(0);
        popFault("2.7.5.3.1");
    }

    @Test
    void misalignedIndirectTableLength() {
        ring.desc(0, d + 0x1000, 24, INDIRECT, 0).makeAvailable(0);
        popFault("2.7.5.3.1");
    }

    @Test
    void indirectWithoutTheFeature() {
        long t = d + 0x1000;
        ring.indirectDesc(t, 0, d, 16, 0, 0);
        ring.desc(0, t, 16, INDIRECT, 0).makeAvailable(0);
        SplitDeviceQueue q = new SplitDeviceQueue(mem, 0, ring.layout(), 0);
        assertEquals("2.7.5.3.1", assertThrows(GuestFaultException.class, q::pop).section());
    }

    @Test
    void indirectTableOutsideMemory() {
        ring.desc(0, MEM - 16, 32, INDIRECT, 0).makeAvailable(0);
        popFault("2.7.5.3");
    }

    @Test
    void availIndexJumpsPastQueueSize() {
        ring.desc(0, d, 16, 0, 0).setAvailIdx(9);
        GuestFaultException e = popFault("2.7.6");
        assertTrue(e.getMessage().contains("moved"));
    }

    @Test
    void writableThenReadable() {
        ring.desc(0, d, 16, WRITE | NEXT, 1).desc(1, d + 16, 16, 0, 0).makeAvailable(0);
        popFault("2.7.4.2");
    }

    @Test
    void descriptorAddressPastEndOfMemory() {
        ring.desc(0, MEM, 16, 0, 0).makeAvailable(0);
        popFault("2.7.5");
    }

    @Test
    void descriptorRunsPastEndOfMemory() {
        ring.desc(0, MEM - 8, 16, 0, 0).makeAvailable(0);
        popFault("2.7.5");
    }

    @Test
    void addressPlusLengthOverflows() {
        ring.desc(0, 0xffff_ffff_ffff_ff00L, 0x1000, 0, 0).makeAvailable(0);
        popFault("2.7.5");
    }

    @Test
    void chainLongerThan2To32Bytes() {
        // A 4100 MiB region whose 1 MiB chunks all alias one buffer: big enough for the ranges to be
        // valid, so that only the total-length rule (section 2.7.5.2) can refuse the chain.
        java.nio.ByteBuffer one = java.nio.ByteBuffer.allocateDirect(1 << 20);
        java.util.List<java.nio.ByteBuffer> chunks = java.util.Collections.nCopies(4100, one);
        mem = OffHeapGuestMemory.wrap(java.util.List.of(new io.kickplug.api.memory.MemoryRegion(0, 4100L << 20)),
                java.util.List.of(chunks));
        ring = new RawRing(mem, 8, 0);
        ring.desc(0, 1 << 20, -1, NEXT, 1).desc(1, 1 << 20, 2, 0, 0).makeAvailable(0);
        popFault("2.7.5.2");
    }

    @Test
    void sameHeadAvailableTwiceWhileInFlight() {
        ring.desc(0, d, 16, 0, 0).makeAvailable(0).makeAvailable(0);
        SplitDeviceQueue q = new SplitDeviceQueue(mem, 0, ring.layout(), FEATURES);
        assertNotNull(q.pop());
        assertEquals("2.7.13", assertThrows(GuestFaultException.class, q::pop).section());
    }
}
