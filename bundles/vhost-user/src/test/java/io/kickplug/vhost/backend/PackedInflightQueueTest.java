package io.kickplug.vhost.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.packed.PackedDriverQueue;
import io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The packed queue region of the vhost-user inflight area (vhost-user.rst "Inflight I/O tracking", packed
 * virtqueue) with the real packed driver and device views: its layout, what taking and using a chain records, and
 * that a back-end that dies at any store between taking a chain and using it leaves a region from which the next
 * back-end completes every request exactly once.
 */
class PackedInflightQueueTest {

    private static final int SIZE = 8;
    private static final long FEATURES = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_PACKED
            | VirtioFeatures.RING_INDIRECT_DESC;
    /** The driver's indirect tables: 4 descriptors per buffer ID. */
    private static final long INDIRECT = 0x3000;
    private static final int MAX_INDIRECT = 4;
    private static final VirtqueueFactory PACKED = new PackedVirtqueueFactoryComponent();
    private static final QueueLayout LAYOUT = RingFormat.PACKED.layout(SIZE, 0);
    /** Each request's first (readable) buffer holds its token: 16 bytes at DATA + 16 * token. */
    private static final long DATA = 0x1000;

    @Test
    void layoutMatchesQueueRegionPackedAndDescStatePacked() {
        // 32-byte header (29 bytes of fields, aligned for the u64 of the entries), 32 bytes per entry, 64-aligned.
        assertEquals(64, PackedInflightArea.queueBytes(1));
        assertEquals(2112, PackedInflightArea.queueBytes(64), "32 + 32 * 64 = 2080, aligned up");
        assertEquals(8256, InflightRegion.queueBytes(256, true));
        assertEquals(4160, InflightRegion.queueBytes(256, false), "the split layout is unchanged: 16 * 256 + 16, aligned up");
        assertEquals(2 * 64 * 34, InflightRegion.totalBytes(2, 67, true), "32 + 32 * 67 = 2176 = 34 * 64");
        ByteBuffer b = ByteBuffer.allocate((int) PackedInflightArea.queueBytes(4)).order(ByteOrder.LITTLE_ENDIAN);
        PackedInflightArea a = new PackedInflightArea(b, null);
        a.u16(PackedInflightArea.OFF_USED_IDX, 0x1234);
        a.u8(PackedInflightArea.OFF_OLD_USED_WRAP, 1);
        a.num(1, 3);
        a.counter(1, 0x0102030405060708L);
        a.copy(1, 0x1122334455667788L, 0x99aabbcc, 0x0d0e, 0x8083);
        assertEquals(0x1234, b.getShort(16));
        assertEquals(1, b.get(21));
        int e1 = 32 + 32;
        assertEquals(3, b.getShort(e1 + 6));
        assertEquals(0x0102030405060708L, b.getLong(e1 + 8));
        assertEquals(0x0d0e, b.getShort(e1 + 16));
        assertEquals((short) 0x8083, b.getShort(e1 + 18));
        assertEquals(0x99aabbcc, b.getInt(e1 + 20));
        assertEquals(0x1122334455667788L, b.getLong(e1 + 24));
    }

    /** One back-end: the queue, its region and the memory it writes through. */
    private static final class Backend {
        final ByteBuffer region;
        final PackedInflightArea area;
        final PackedInflightQueue queue;

        Backend(GuestMemory memory, ByteBuffer region, Runnable beforeStore) throws Refused {
            this.region = region;
            this.area = new PackedInflightArea(region, beforeStore);
            PackedInflightQueue.Recovery rec = PackedInflightQueue.recover(area, SIZE, memory, LAYOUT.descTable(),
                    RingFormat.PACKED.initialIndex());
            DeviceQueue q = PACKED.createDeviceQueue(memory, 0, LAYOUT, FEATURES, rec.nextAvail(), rec.nextUsed());
            this.queue = new PackedInflightQueue(q, area, memory, LAYOUT.descTable(), rec);
        }
    }

    /** Each test's guest memory, driver and inflight region (JUnit makes an instance per test). */
    private final OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(1 << 14);
    private final PackedDriverQueue driver = new PackedDriverQueue(mem, LAYOUT, FEATURES, INDIRECT, MAX_INDIRECT);
    private final ByteBuffer region = region();

    private static ByteBuffer region() {
        return ByteBuffer.allocate((int) PackedInflightArea.queueBytes(SIZE)).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Test
    void aFreshRegionIsInitialisedAndTakingAndUsingAChainIsRecorded() throws Exception {
        Backend b = new Backend(mem, region, null);
        PackedInflightArea a = b.area;
        assertEquals(InflightRegion.VERSION, a.version());
        assertEquals(SIZE, a.descNum());
        assertEquals(1, a.u8(PackedInflightArea.OFF_USED_WRAP), "section 2.8.1: the used wrap counter starts at 1");
        for (int e = 0; e < SIZE; e++) {
            assertEquals(e + 1, a.next(e), "free list in entry order");
        }
        add(driver, mem, 7, 3);
        DescriptorChain c = b.queue.pop();
        // Entry 0 heads the chain: in flight, 3 descriptors in entries 0, 1, 2, counter 0; copies of the ring.
        assertTrue(a.inflight(0));
        assertEquals(3, a.num(0));
        assertEquals(2, a.last(0));
        assertEquals(0, a.counter(0));
        assertEquals(DATA + 16 * 7, a.addr(0));
        assertEquals(16, a.len(0));
        assertEquals(c.head(), a.id(2), "the buffer ID of the last descriptor");
        assertEquals(PackedInflightQueue.F_NEXT | PackedInflightQueue.F_AVAIL, a.flags(0));
        assertEquals(PackedInflightQueue.F_WRITE | PackedInflightQueue.F_AVAIL, a.flags(2));
        assertEquals(3, a.u16(PackedInflightArea.OFF_FREE_HEAD));
        assertEquals(3, a.u16(PackedInflightArea.OFF_OLD_FREE_HEAD));
        b.queue.pushUsed(c.head(), 7);
        assertFalse(a.inflight(0));
        assertEquals(0, a.u16(PackedInflightArea.OFF_FREE_HEAD), "the chain's entries back at the front");
        assertEquals(3, a.next(2), "followed by the rest of the free list");
        assertEquals(3, a.u16(PackedInflightArea.OFF_USED_IDX));
        assertEquals(3, a.u16(PackedInflightArea.OFF_OLD_USED_IDX));
        assertEquals(0, a.u16(PackedInflightArea.OFF_OLD_FREE_HEAD));
        assertEquals(new UsedBuffer(7, 7), driver.getUsed());
    }

    @Test
    void chainsInFlightAreResubmittedInTheOrderTheyWereTakenThoughTheRingWasOverwritten() throws Exception {
        Backend b = new Backend(mem, region, null);
        add(driver, mem, 1, 2);
        add(driver, mem, 2, 3);
        add(driver, mem, 3, 1);
        DescriptorChain c1 = b.queue.pop();
        DescriptorChain c2 = b.queue.pop();
        DescriptorChain c3 = b.queue.pop();
        // Used out of order: the used descriptors of 3 and 2 overwrite ring slots 0-3, where 1 and 2 were.
        b.queue.pushUsed(c3.head(), 3);
        b.queue.pushUsed(c2.head(), 2);
        assertEquals(new UsedBuffer(3, 3), driver.getUsed());
        assertEquals(new UsedBuffer(2, 2), driver.getUsed());
        assertTrue(c1.head() >= 0);
        // The back-end dies with request 1 in flight; the next one puts it back at the used position (4).
        Backend next = new Backend(mem, region, null);
        assertEquals(1, next.queue.resubmitPending());
        DescriptorChain again = next.queue.pop();
        assertEquals(1, again.reader().readU32(), "request 1, from the region's copies");
        assertEquals(2, again.bufferCount());
        assertEquals(null, next.queue.pop(), "nothing else was available");
        next.queue.pushUsed(again.head(), 1);
        assertEquals(new UsedBuffer(1, 1), driver.getUsed());
        // The ring continues: a new request after the resubmitted one.
        add(driver, mem, 4, 3);
        DescriptorChain c4 = next.queue.pop();
        assertEquals(4, c4.reader().readU32());
        next.queue.pushUsed(c4.head(), 4);
        assertEquals(new UsedBuffer(4, 4), driver.getUsed());
    }

    @Test
    void aRegionThatContradictsItselfIsRefused() throws Exception {
        new Backend(mem, region, null);
        PackedInflightArea a = new PackedInflightArea(region, null);
        a.next(5, 3); // 3 -> 4 -> 5 -> 3: a circle
        assertThrows(Refused.class, () -> new Backend(mem, region, null));
        ByteBuffer r2 = region();
        new Backend(mem, r2, null);
        PackedInflightArea a2 = new PackedInflightArea(r2, null);
        a2.u16(PackedInflightArea.OFF_OLD_FREE_HEAD, 2);
        a2.u16(PackedInflightArea.OFF_FREE_HEAD, 2);
        a2.inflight(0, true);
        a2.num(0, SIZE + 1);
        assertThrows(Refused.class, () -> new Backend(mem, r2, null), "a chain longer than the ring");
        a2.num(0, 2);
        a2.last(0, 0);
        assertThrows(Refused.class, () -> new Backend(mem, r2, null), "a chain whose last entry is wrong");
        a2.last(0, 1);
        new Backend(mem, r2, null); // now consistent: entries 0 and 1 hold one chain
    }

    // A back-end that dies at every store.

    private static final class Crash extends Error {
        private static final long serialVersionUID = 1L;

        Crash() {
            super("the back-end died", null, false, false);
        }
    }

    /** Counts stores and throws {@link Crash} before the one after {@code limit}. */
    private static final class Steps {
        final int limit;
        int count;

        Steps(int limit) {
            this.limit = limit;
        }

        void step() {
            if (count == limit) {
                throw new Crash();
            }
            count++;
        }
    }

    /** {@code memory} with {@code step} run before every write (the device's ring stores). */
    private static GuestMemory counting(GuestMemory memory, Runnable step) {
        return (GuestMemory) Proxy.newProxyInstance(GuestMemory.class.getClassLoader(),
                new Class<?>[] {GuestMemory.class}, (p, m, args) -> {
                    if (m.getName().startsWith("write") || m.getName().equals("fill")) {
                        step.run();
                    }
                    try {
                        return m.invoke(memory, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    /** Adds request {@code token}: a readable buffer holding the token, then up to two more buffers. */
    private static boolean add(PackedDriverQueue driver, GuestMemory mem, int token, int buffers) {
        return add(driver, mem, token, buffers, false);
    }

    /** {@link #add(PackedDriverQueue, GuestMemory, int, int)}, in an indirect table (one ring descriptor) or not. */
    private static boolean add(PackedDriverQueue driver, GuestMemory mem, int token, int buffers, boolean indirect) {
        long at = DATA + 16L * token;
        mem.writeU32(at, token);
        List<BufferSpec> chain = new ArrayList<>();
        chain.add(BufferSpec.readable(at, 16));
        if (buffers > 2) {
            chain.add(BufferSpec.readable(at + 4, 4));
        }
        if (buffers > 1) {
            chain.add(BufferSpec.writable(at + 8, 8));
        }
        return driver.add(chain, indirect, token);
    }

    /** The driver takes every used buffer: each token once, with the token as written length (no mix-up). */
    private static void collect(PackedDriverQueue driver, Set<Integer> delivered) {
        UsedBuffer u;
        while ((u = driver.getUsed()) != null) {
            assertEquals(u.token(), u.writtenBytes(), "the used descriptor belongs to this request");
            assertTrue(delivered.add((Integer) u.token()), "request " + u.token() + " completed twice");
        }
    }

    /**
     * Runs random traffic of {@code seed} against a back-end that dies at its {@code limit}-th store (ring or
     * region), then lets a new back-end recover and serve everything; checks that every request the driver added
     * completed exactly once. Returns the stores the first back-end made.
     */
    private static int crashAndRecover(long seed, int limit) throws Exception {
        Random rnd = new Random(seed);
        OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(1 << 14);
        PackedDriverQueue driver = new PackedDriverQueue(mem, LAYOUT, FEATURES, INDIRECT, MAX_INDIRECT);
        ByteBuffer region = region();
        Steps steps = new Steps(limit);
        Set<Integer> added = new HashSet<>();
        Set<Integer> delivered = new HashSet<>();
        int token = 0;
        try {
            Backend b = new Backend(counting(mem, steps::step), region, steps::step);
            List<DescriptorChain> taken = new ArrayList<>();
            for (int op = 0; op < 60; op++) {
                switch (rnd.nextInt(4)) {
                    case 0 -> {
                        if (add(driver, mem, token, 1 + rnd.nextInt(3), rnd.nextInt(4) == 0)) {
                            added.add(token++);
                        }
                    }
                    case 1 -> {
                        for (int k = rnd.nextInt(3); k > 0; k--) {
                            DescriptorChain c = b.queue.pop();
                            if (c != null) {
                                taken.add(c);
                            }
                        }
                    }
                    case 2 -> {
                        Collections.shuffle(taken, rnd);
                        int n = Math.min(taken.size(), 1 + rnd.nextInt(3));
                        for (int k = 0; k < n; k++) {
                            DescriptorChain c = taken.remove(taken.size() - 1);
                            b.queue.pushUsedBatched(c.head(), c.reader().readU32());
                        }
                        b.queue.publishUsed();
                    }
                    default -> collect(driver, delivered);
                }
            }
        } catch (Crash expected) {
            // The back-end died; the driver (the guest) lives on.
        }
        int stores = steps.count;
        // The next back-end, on the same ring and region: it takes and uses everything, the driver keeps adding.
        Backend next = new Backend(mem, region, null);
        for (int round = 0; round < 4; round++) {
            if (round > 0) {
                for (int k = 0; k < 3; k++) {
                    if (add(driver, mem, token, 1 + (k + round) % 3)) {
                        added.add(token++);
                    }
                }
            }
            List<DescriptorChain> taken = new ArrayList<>();
            DescriptorChain c;
            while ((c = next.queue.pop()) != null) {
                taken.add(c);
            }
            Collections.reverse(taken);
            for (DescriptorChain t : taken) {
                next.queue.pushUsedBatched(t.head(), t.reader().readU32());
            }
            next.queue.publishUsed();
            collect(driver, delivered);
        }
        assertEquals(0, next.queue.resubmitPending());
        assertEquals(added, delivered, "seed " + seed + ", died after " + stores + " stores: every request once");
        assertEquals(0, driver.inFlight());
        return stores;
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 14, 34})
    void aBackEndThatDiesAtAnyStoreLeavesARecoverableRegion(long seed) throws Exception {
        int total = crashAndRecover(seed, Integer.MAX_VALUE);
        assertTrue(total > 100, "the scenario makes " + total + " stores");
        for (int limit = 0; limit <= total; limit++) {
            crashAndRecover(seed, limit);
        }
    }

    @Test
    void anIndirectChainIsResubmittedWithItsTable() throws Exception {
        Backend b = new Backend(mem, region, null);
        add(driver, mem, 5, 3, true);
        add(driver, mem, 6, 2, false);
        DescriptorChain indirect = b.queue.pop();
        DescriptorChain direct = b.queue.pop();
        assertEquals(3, indirect.bufferCount());
        assertEquals(1, b.area.num(0), "an indirect chain takes one ring descriptor");
        assertEquals(PackedInflightQueue.F_INDIRECT, b.area.flags(0) & PackedInflightQueue.F_INDIRECT);
        b.queue.pushUsed(direct.head(), 6); // its used descriptor overwrites the indirect one's slot
        assertEquals(new UsedBuffer(6, 6), driver.getUsed());
        Backend next = new Backend(mem, region, null);
        DescriptorChain again = next.queue.pop();
        assertEquals(3, again.bufferCount(), "the table is followed again");
        assertEquals(5, again.reader().readU32());
        next.queue.pushUsed(again.head(), 5);
        assertEquals(new UsedBuffer(5, 5), driver.getUsed());
    }

    @Test
    void theSameRegionRecoversTheSameWayTwice() throws Exception {
        // A back-end that dies during its recovery leaves the region as it found it, or further on: recovering
        // twice gives the same positions and the same chains.
        Backend b = new Backend(mem, region, null);
        for (int t = 0; t < 3; t++) {
            add(driver, mem, t, 2);
        }
        b.queue.pop();
        DescriptorChain second = b.queue.pop();
        b.queue.pop();
        b.queue.pushUsed(second.head(), 1);
        byte[] ring1 = new byte[(int) RingFormat.PACKED.bytes(SIZE)];
        PackedInflightArea a = new PackedInflightArea(region, null);
        PackedInflightQueue.Recovery r1 = PackedInflightQueue.recover(a, SIZE, mem, 0, 0x8000);
        mem.read(0, ring1, 0, ring1.length);
        PackedInflightQueue.Recovery r2 = PackedInflightQueue.recover(a, SIZE, mem, 0, 0x8000);
        byte[] ring2 = new byte[ring1.length];
        mem.read(0, ring2, 0, ring2.length);
        assertEquals(r1.nextAvail(), r2.nextAvail());
        assertEquals(r1.availAfter(), r2.availAfter());
        assertEquals(r1.nextUsed(), r2.nextUsed());
        assertArrayEquals(r1.resubmit(), r2.resubmit());
        assertArrayEquals(ring1, ring2);
        assertEquals(2, r1.resubmit().length);
        assertEquals(0x8000 | 2, r1.nextUsed(), "one chain of two used");
        assertEquals(0x8000 | 2, r1.nextAvail(), "the device takes the resubmitted chains from the used position");
        assertEquals(0x8000 | 6, r1.availAfter(), "two chains of two in flight after it");
    }
}
