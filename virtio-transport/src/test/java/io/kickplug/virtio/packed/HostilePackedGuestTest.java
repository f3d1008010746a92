package io.kickplug.virtio.packed;

import static io.kickplug.api.transport.MmioRegisters.*;
import static io.kickplug.virtio.testkit.RawPackedRing.*;
import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.testkit.EchoDevice;
import io.kickplug.virtio.testkit.RawPackedRing;
import io.kickplug.virtio.transport.MmioTransport;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A hostile driver's packed rings, one attack each (VIRTIO 1.2 section 2.8). At the queue, each must end in a
 * {@link GuestFaultException} naming the broken rule and a broken queue that yields nothing more; through an
 * MMIO transport, in DEVICE_NEEDS_RESET with a configuration-change interrupt (section 2.1.2), and after a reset
 * the device serves a well-formed chain again. Guest memory is 1 MiB: an access outside it would throw a
 * memory exception instead of the fault.
 */
class HostilePackedGuestTest {
    static final long MEM = 1 << 20;
    static final long ALL = VirtioFeatures.RING_PACKED | VirtioFeatures.RING_INDIRECT_DESC
            | VirtioFeatures.RING_EVENT_IDX;

    /** Each attack: the section it breaks, what it writes into a fresh ring of 8, and chains popped before the fault. */
    enum Attack {
        CHAIN_LONGER_THAN_QUEUE("2.8.17", 0, r -> {
            long[] a = new long[8];
            int[] l = new int[8];
            int[] f = new int[8];
            for (int i = 0; i < 8; i++) {
                a[i] = r.dataArea() + 16L * i;
                l[i] = 16;
            }
            // Eight descriptors, and the last one says NEXT too: the chain would go round the ring.
            r.avail(0, a, l, f);
            r.desc(7, a[7], 16, 0, NEXT | availBits(true));
        }),
        INDIRECT_IN_INDIRECT("2.8.19", 0, r -> {
            long t1 = r.dataArea() + 0x1000;
            long t2 = r.dataArea() + 0x2000;
            r.indirectDesc(t2, 0, r.dataArea(), 16, 0);
            r.indirectDesc(t1, 0, t2, 16, INDIRECT);
            r.availOne(0, t1, 16, INDIRECT);
        }),
        INDIRECT_WITH_NEXT("2.8.19", 0, r -> {
            long t = r.dataArea() + 0x1000;
            r.indirectDesc(t, 0, r.dataArea(), 16, 0);
            r.avail(0, new long[] {t, r.dataArea()}, new int[] {16, 16}, new int[] {INDIRECT, 0});
        }),
        INDIRECT_INSIDE_A_CHAIN("2.8.19", 0, r -> {
            long t = r.dataArea() + 0x1000;
            r.indirectDesc(t, 0, r.dataArea(), 16, 0);
            r.avail(0, new long[] {r.dataArea(), t}, new int[] {16, 16}, new int[] {0, INDIRECT});
        }),
        NEXT_INSIDE_AN_INDIRECT_TABLE("2.8.19", 0, r -> {
            long t = r.dataArea() + 0x1000;
            r.indirectDesc(t, 0, r.dataArea(), 16, NEXT).indirectDesc(t, 1, r.dataArea(), 16, 0);
            r.availOne(0, t, 32, INDIRECT);
        }),
        ZERO_LENGTH_INDIRECT_TABLE("2.8.19", 0, r -> r.availOne(0, r.dataArea() + 0x1000, 0, INDIRECT)),
        INDIRECT_TABLE_OUTSIDE_MEMORY("2.8.7", 0, r -> r.availOne(0, MEM - 16, 32, INDIRECT)),
        BUFFER_ID_OUT_OF_RANGE("2.8.13", 0, r -> r.availOne(8, r.dataArea(), 16, 0)),
        BUFFER_ID_ALREADY_IN_FLIGHT("2.8.21", 1, r -> r.availOne(3, r.dataArea(), 16, 0)
                .availOne(3, r.dataArea() + 16, 16, 0)),
        WRONG_WRAP_BIT("2.8.1", 0, r -> {
            // The head is available in lap 1; the second descriptor carries lap 0's bits (AVAIL clear, USED set).
            r.desc(1, r.dataArea() + 16, 4, 0, WRITE | availBits(false));
            r.desc(0, r.dataArea(), 16, 0, NEXT | availBits(true));
        }),
        WRITABLE_BEFORE_READABLE("2.8.17", 0, r -> r.avail(0, new long[] {r.dataArea(), r.dataArea() + 16},
                new int[] {16, 16}, new int[] {WRITE, 0})),
        ADDRESS_PAST_MEMORY("2.8.4", 0, r -> r.availOne(0, MEM, 16, 0)),
        BUFFER_RUNS_PAST_MEMORY("2.8.4", 0, r -> r.availOne(0, MEM - 8, 16, 0)),
        ADDRESS_PLUS_LENGTH_OVERFLOWS("2.8.4", 0, r -> r.availOne(0, 0xffff_ffff_ffff_ff00L, 0x1000, 0));

        final String section;
        final int goodPops;
        final Consumer<RawPackedRing> write;

        Attack(String section, int goodPops, Consumer<RawPackedRing> write) {
            this.section = section;
            this.goodPops = goodPops;
            this.write = write;
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Attack.class)
    void queueRefusesAndBreaks(Attack attack) {
        OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(MEM);
        RawPackedRing ring = new RawPackedRing(mem, 8, 0);
        attack.write.accept(ring);
        PackedDeviceQueue q = new PackedDeviceQueue(mem, 0, ring.layout(), ALL);
        for (int i = 0; i < attack.goodPops; i++) {
            assertNotNull(q.pop());
        }
        GuestFaultException e = assertThrows(GuestFaultException.class, q::pop);
        assertEquals(attack.section, e.section(), e.getMessage());
        assertTrue(q.isBroken());
        assertNull(q.pop(), "a broken queue yields nothing");
        assertFalse(q.hasAvailable());
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Attack.class, names = "BUFFER_ID_ALREADY_IN_FLIGHT", mode = EnumSource.Mode.EXCLUDE)
    void transportLatchesDeviceNeedsReset(Attack attack) throws Exception {
        // (BUFFER_ID_ALREADY_IN_FLIGHT needs a device that holds a buffer; the echo device completes each one
        // before it pops the next, so only the queue-level test can show it.)
        OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(MEM);
        EchoDevice device = new EchoDevice(1, ALL);
        MmioTransport mmio = new MmioTransport(device, mem,
                RingSelector.of(new VirtqueueFactoryComponent(), new PackedVirtqueueFactoryComponent()));
        Semaphore irq = new Semaphore(0);
        mmio.connectInterrupts(v -> irq.release());
        try {
            RawPackedRing ring = start(mmio, mem);
            attack.write.accept(ring);
            mmio.write(QUEUE_NOTIFY, 4, 0);
            // Section 2.1.2: with DRIVER_OK set the device MUST send a configuration-change notification.
            assertTrue(irq.tryAcquire(10, TimeUnit.SECONDS), "configuration-change interrupt");
            assertEquals(INT_CONFIG_CHANGE, mmio.read(INTERRUPT_STATUS, 4) & INT_CONFIG_CHANGE);
            assertNotEquals(0, mmio.read(STATUS, 4) & DeviceStatus.DEVICE_NEEDS_RESET, "DEVICE_NEEDS_RESET");
            String fault = mmio.function().lastFault();
            assertTrue(fault.endsWith("(VIRTIO 1.2 section " + attack.section + ")"), fault);
            assertEquals(0, device.completed.get(), "nothing of the bad chain was used");
            // Section 2.4: a reset clears the latch; a well-formed chain is served on the fresh ring.
            mmio.write(STATUS, 4, 0);
            assertEquals(0, mmio.read(STATUS, 4));
            ring = start(mmio, mem);
            ring.availPair(0, ring.dataArea(), 16, ring.dataArea() + 0x100, 4);
            mmio.write(QUEUE_NOTIFY, 4, 0);
            device.awaitIdle();
            assertEquals(1, device.completed.get());
            assertEquals(0x5a, mem.readU8(ring.dataArea() + 0x103));
            assertEquals(AVAIL | USED, ring.flags(0) & (AVAIL | USED), "used in lap 1");
            assertEquals(0, ring.id(0));
            assertEquals(0, mmio.read(STATUS, 4) & DeviceStatus.DEVICE_NEEDS_RESET);
        } finally {
            mmio.close();
            device.close();
        }
    }

    /** Section 3.1.1 with VIRTIO_F_RING_PACKED accepted, queue 0 on a fresh packed ring of 8, DRIVER_OK. */
    static RawPackedRing start(MmioTransport mmio, OffHeapGuestMemory mem) {
        long features = VirtioFeatures.VERSION_1 | ALL;
        RawPackedRing ring = new RawPackedRing(mem, 8, 0);
        mmio.write(STATUS, 4, DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER);
        mmio.write(DEVICE_FEATURES_SEL, 4, 1);
        assertNotEquals(0, mmio.read(DEVICE_FEATURES, 4) & (VirtioFeatures.RING_PACKED >>> 32), "RING_PACKED offered");
        mmio.write(DRIVER_FEATURES_SEL, 4, 0);
        mmio.write(DRIVER_FEATURES, 4, features & 0xffffffffL);
        mmio.write(DRIVER_FEATURES_SEL, 4, 1);
        mmio.write(DRIVER_FEATURES, 4, features >>> 32);
        mmio.write(STATUS, 4, DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER | DeviceStatus.FEATURES_OK);
        assertNotEquals(0, mmio.read(STATUS, 4) & DeviceStatus.FEATURES_OK);
        mmio.write(QUEUE_SEL, 4, 0);
        mmio.write(QUEUE_NUM, 4, 8);
        mmio.write(QUEUE_DESC_LOW, 4, ring.layout().descTable());
        mmio.write(QUEUE_DESC_HIGH, 4, 0);
        mmio.write(QUEUE_DRIVER_LOW, 4, ring.layout().availRing());
        mmio.write(QUEUE_DRIVER_HIGH, 4, 0);
        mmio.write(QUEUE_DEVICE_LOW, 4, ring.layout().usedRing());
        mmio.write(QUEUE_DEVICE_HIGH, 4, 0);
        mmio.write(QUEUE_READY, 4, 1);
        mmio.write(STATUS, 4, DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER | DeviceStatus.FEATURES_OK
                | DeviceStatus.DRIVER_OK);
        assertTrue(mmio.function().isActive());
        return ring;
    }

    /** A split-only transport does not offer VIRTIO_F_RING_PACKED and refuses FEATURES_OK with it (section 2.2.2). */
    @org.junit.jupiter.api.Test
    void splitOnlyTransportDoesNotOfferPacked() {
        OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(MEM);
        EchoDevice device = new EchoDevice(1, ALL);
        MmioTransport mmio = new MmioTransport(device, mem, new VirtqueueFactoryComponent());
        try {
            mmio.write(STATUS, 4, DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER);
            mmio.write(DEVICE_FEATURES_SEL, 4, 1);
            assertEquals(0, mmio.read(DEVICE_FEATURES, 4) & (VirtioFeatures.RING_PACKED >>> 32));
            long features = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_PACKED;
            mmio.write(DRIVER_FEATURES_SEL, 4, 1);
            mmio.write(DRIVER_FEATURES, 4, features >>> 32);
            mmio.write(STATUS, 4, DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER | DeviceStatus.FEATURES_OK);
            assertEquals(0, mmio.read(STATUS, 4) & DeviceStatus.FEATURES_OK);
        } finally {
            mmio.close();
            device.close();
        }
    }

    /** A chain handed back by a queue that faulted later is still the one popped before (pooling is per ID). */
    @org.junit.jupiter.api.Test
    void chainPoppedBeforeTheFaultStaysIntact() {
        OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(MEM);
        RawPackedRing ring = new RawPackedRing(mem, 8, 0);
        Attack.BUFFER_ID_ALREADY_IN_FLIGHT.write.accept(ring);
        PackedDeviceQueue q = new PackedDeviceQueue(mem, 0, ring.layout(), ALL);
        DescriptorChain first = q.pop();
        assertThrows(GuestFaultException.class, q::pop);
        assertEquals(3, first.head());
        assertEquals(16, first.readableBytes());
    }
}
