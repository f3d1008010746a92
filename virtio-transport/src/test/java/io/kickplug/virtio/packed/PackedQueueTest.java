package io.kickplug.virtio.packed;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent;
import io.kickplug.virtio.queue.SplitDeviceQueue;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The packed ring's driver and device views together (VIRTIO 1.2 section 2.8). */
class PackedQueueTest {
    private static final long ALL = VirtioFeatures.RING_PACKED | VirtioFeatures.RING_INDIRECT_DESC
            | VirtioFeatures.RING_EVENT_IDX;
    private final OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(1 << 20);
    private static final long DATA = 0x10000;
    private static final long INDIRECT = 0x80000;

    private PackedDriverQueue driver(int size, long features) {
        return new PackedDriverQueue(mem, RingFormat.PACKED.layout(size, 0), features, INDIRECT, 8);
    }

    private PackedDeviceQueue device(int size, long features) {
        return new PackedDeviceQueue(mem, 0, RingFormat.PACKED.layout(size, 0), features);
    }

    private static List<BufferSpec> pair(int k) {
        return List.of(BufferSpec.readable(DATA + 0x100L * k, 16), BufferSpec.writable(DATA + 0x100L * k + 0x80, 4));
    }

    @Test
    void featureBitIs34AndSelectsThePackedFactory() {
        assertEquals(1L << 34, RingFormat.PACKED.feature());
        assertEquals(RingFormat.PACKED, RingFormat.of(VirtioFeatures.VERSION_1 | VirtioFeatures.RING_PACKED));
        VirtqueueFactory both = RingSelector.of(new VirtqueueFactoryComponent(), new PackedVirtqueueFactoryComponent());
        assertTrue(both.supports(RingFormat.PACKED));
        assertFalse(new VirtqueueFactoryComponent().supports(RingFormat.PACKED));
        QueueLayout packed = RingFormat.PACKED.layout(8, 0);
        assertInstanceOf(PackedDeviceQueue.class, both.createDeviceQueue(mem, 0, packed, ALL, 0x8000, 0x8000));
        assertInstanceOf(SplitDeviceQueue.class,
                both.createDeviceQueue(mem, 0, QueueLayout.contiguous(8, 0), ALL & ~VirtioFeatures.RING_PACKED, 0, 0));
    }

    /** Direct and indirect chains go through; the device sees the driver's bytes, the driver the device's. */
    @Test
    void directAndIndirectChainsRoundTrip() {
        PackedDriverQueue drv = driver(8, ALL);
        PackedDeviceQueue dev = device(8, ALL);
        for (int k = 0; k < 4; k++) {
            mem.writeU32(DATA + 0x100L * k, 0x1000 + k);
            assertTrue(drv.add(pair(k), k % 2 == 1, "t" + k));
        }
        assertEquals(8 - 2 - 1 - 2 - 1, drv.freeDescriptors(), "two direct chains of 2, two indirect of 1");
        for (int k = 0; k < 4; k++) {
            DescriptorChain c = dev.pop();
            assertNotNull(c);
            assertEquals(2, c.bufferCount());
            assertEquals(16, c.readableBytes());
            assertEquals(4, c.writableBytes());
            assertEquals(0x1000 + k, c.reader().readU32());
            c.writer().write(new byte[] {1, 2, 3, (byte) k}, 0, 4);
            dev.pushUsed(c.head(), 4);
        }
        assertNull(dev.pop());
        for (int k = 0; k < 4; k++) {
            UsedBuffer u = drv.getUsed();
            assertEquals("t" + k, u.token());
            assertEquals(4, u.writtenBytes());
            assertEquals(k, mem.readU8(DATA + 0x100L * k + 0x83));
        }
        assertNull(drv.getUsed());
        assertEquals(8, drv.freeDescriptors());
    }

    /** Section 2.8.22: buffers may be used in any order; the used descriptor carries the buffer ID. */
    @Test
    void outOfOrderCompletionReturnsBufferIds() {
        PackedDriverQueue drv = driver(8, ALL);
        PackedDeviceQueue dev = device(8, ALL);
        List<DescriptorChain> chains = new ArrayList<>();
        for (int k = 0; k < 3; k++) {
            drv.add(pair(k), false, "t" + k);
            chains.add(dev.pop());
        }
        int[] order = {2, 0, 1};
        for (int k : order) {
            dev.pushUsedBatched(chains.get(k).head(), k);
        }
        dev.publishUsed();
        // The used descriptors are written in ring order 0, 2, 4 (each chain took two), with IDs 2, 0, 1.
        assertEquals(chains.get(2).head(), mem.readU16(12) & 0xffff);
        assertEquals(chains.get(0).head(), mem.readU16(2 * 16 + 12) & 0xffff);
        for (int k : order) {
            UsedBuffer u = drv.getUsed();
            assertEquals("t" + k, u.token());
            assertEquals(k, u.writtenBytes());
        }
        assertEquals(8, drv.freeDescriptors());
        assertEquals(PackedRing.encode(6, true), dev.nextUsed());
        // IDs come back to the free list and are used again.
        for (int k = 0; k < 4; k++) {
            assertTrue(drv.add(pair(k), true, "u" + k));
            dev.pushUsed(dev.pop().head(), 0);
            assertEquals("u" + k, drv.getUsed().token());
        }
    }

    /**
     * Section 2.8.1: a chain that runs past the end of the ring continues at position 0 with the other wrap
     * counter, and the device marks used descriptors with its own used wrap counter.
     */
    @Test
    void chainWrapsAroundTheRingEnd() {
        PackedDriverQueue drv = driver(5, ALL);
        PackedDeviceQueue dev = device(5, ALL);
        for (int k = 0; k < 2; k++) {
            drv.add(pair(k), false, k);
            dev.pushUsed(dev.pop().head(), 0);
            drv.getUsed();
        }
        // Position 4, wrap 1: three descriptors take 4, then 0 and 1 of the next lap.
        List<BufferSpec> three = List.of(BufferSpec.readable(DATA, 8), BufferSpec.readable(DATA + 8, 8),
                BufferSpec.writable(DATA + 0x80, 1));
        assertTrue(drv.add(three, false, "wrapped"));
        assertEquals(PackedRing.DESC_F_AVAIL, mem.readU16(4 * 16 + 14) & (PackedRing.DESC_F_AVAIL | PackedRing.DESC_F_USED));
        assertEquals(PackedRing.DESC_F_USED, mem.readU16(14) & (PackedRing.DESC_F_AVAIL | PackedRing.DESC_F_USED),
                "lap 0: AVAIL clear, USED set");
        DescriptorChain c = dev.pop();
        assertEquals(3, c.bufferCount());
        assertEquals(PackedRing.encode(2, false), dev.nextAvail());
        dev.pushUsed(c.head(), 1);
        assertEquals(PackedRing.DESC_F_AVAIL | PackedRing.DESC_F_USED, mem.readU16(4 * 16 + 14) & 0xffff & ~7,
                "used in lap 1: both bits set");
        assertEquals("wrapped", drv.getUsed().token());
        assertEquals(PackedRing.encode(2, false), dev.nextUsed());
        // Next lap: used descriptors carry wrap 0 (both bits clear).
        drv.add(pair(0), false, "lap0");
        dev.pushUsed(dev.pop().head(), 0);
        assertEquals(0, mem.readU16(2 * 16 + 14) & (PackedRing.DESC_F_AVAIL | PackedRing.DESC_F_USED));
        assertEquals("lap0", drv.getUsed().token());
    }

    /** Section 2.8.10: the device's event suppression structure controls the driver's notifications. */
    @Test
    void deviceEventSuppressionWithAndWithoutEventIdx() {
        for (long features : new long[] {ALL, ALL & ~VirtioFeatures.RING_EVENT_IDX}) {
            PackedDriverQueue drv = driver(8, features);
            PackedDeviceQueue dev = device(8, features);
            dev.disableNotification();
            assertEquals(PackedRing.RING_EVENT_FLAGS_DISABLE, mem.readU16(8 * 16 + 4 + 2));
            drv.add(pair(0), false, 0);
            assertFalse(drv.kickPrepare(), "DISABLE: no kick");
            assertTrue(dev.enableNotification(), "a buffer arrived while disabled: drain again");
            boolean eventIdx = (features & VirtioFeatures.RING_EVENT_IDX) != 0;
            assertEquals(eventIdx ? PackedRing.RING_EVENT_FLAGS_DESC : PackedRing.RING_EVENT_FLAGS_ENABLE,
                    mem.readU16(8 * 16 + 4 + 2));
            dev.pushUsed(dev.pop().head(), 0);
            assertFalse(dev.enableNotification());
            if (eventIdx) {
                assertEquals(PackedRing.encode(2, true), mem.readU16(8 * 16 + 4) & 0xffff, "event at next avail");
            }
            drv.add(pair(1), false, 1);
            assertTrue(drv.kickPrepare(), "the new descriptor is the one the device asked about");
        }
    }

    /** Section 2.8.10: the driver's structure controls used-buffer notifications; DESC names one descriptor. */
    @Test
    void driverEventSuppressionWithEventIdx() {
        PackedDriverQueue drv = driver(8, ALL);
        PackedDeviceQueue dev = device(8, ALL);
        drv.disableCallbacks();
        drv.add(pair(0), false, 0);
        dev.pushUsed(dev.pop().head(), 0);
        assertFalse(dev.needsNotification(), "DISABLE");
        assertFalse(drv.enableCallbacks(), "a used buffer is pending");
        assertEquals(PackedRing.encode(0, true), drv.usedEvent());
        drv.getUsed();
        assertEquals(PackedRing.encode(2, true), drv.usedEvent(), "event follows the next expected descriptor");
        drv.add(pair(1), false, 1);
        drv.add(pair(2), false, 2);
        DescriptorChain a = dev.pop();
        DescriptorChain b = dev.pop();
        dev.pushUsed(a.head(), 0);
        assertTrue(dev.needsNotification(), "the used descriptor is at the event position");
        dev.pushUsed(b.head(), 0);
        assertFalse(dev.needsNotification(), "the driver has not taken the first one: its event is behind");
    }

    /** Without EVENT_IDX the driver's flags alone decide: ENABLE notifies, DISABLE does not. */
    @Test
    void driverFlagsWithoutEventIdx() {
        long f = ALL & ~VirtioFeatures.RING_EVENT_IDX;
        PackedDriverQueue drv = driver(8, f);
        PackedDeviceQueue dev = device(8, f);
        drv.add(pair(0), false, 0);
        dev.pushUsed(dev.pop().head(), 0);
        assertTrue(dev.needsNotification());
        drv.disableCallbacks();
        drv.add(pair(1), false, 1);
        dev.pushUsed(dev.pop().head(), 0);
        assertFalse(dev.needsNotification());
        assertFalse(dev.needsNotification(), "nothing pushed since");
    }

    /** vhost-user's encoding: position in bits 0-14, wrap counter in bit 15, both ways. */
    @Test
    void startsFromAnEncodedPositionAndWrapCounter() {
        PackedDriverQueue drv = driver(8, ALL);
        int start = PackedRing.encode(6, false);
        drv.resumeAt(start);
        PackedDeviceQueue dev = device(8, ALL);
        dev.setIndices(start, start);
        assertFalse(dev.hasAvailable(), "descriptors of the previous lap are not available");
        for (int k = 0; k < 3; k++) {
            drv.add(pair(k), false, k);
            dev.pushUsed(dev.pop().head(), 0);
            assertEquals(k, drv.getUsed().token());
        }
        assertEquals(PackedRing.encode(4, true), dev.nextAvail());
        assertEquals(PackedRing.encode(4, true), dev.nextUsed());
    }
}
