package io.kickplug.virtio.transport;

import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import static io.kickplug.api.transport.MmioRegisters.*;
import static io.kickplug.virtio.testkit.RawRing.*;
import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.testkit.EchoDevice;
import io.kickplug.virtio.testkit.HostFailures;
import io.kickplug.virtio.testkit.RawRing;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A hostile driver attacks one device end to end, through its MMIO registers and rings, while a second,
 * well-behaved device shares the guest memory. One attack per test. Every ring attack must end with the
 * attacked device in DEVICE_NEEDS_RESET and a configuration-change interrupt delivered (VIRTIO 1.2
 * section 2.1.2), with no exception escaping into the I/O threads, the I/O threads still running tasks,
 * the second device still serving requests, and the attacked one working again after a reset (section
 * 2.4). The two notify attacks are ignored instead.
 */
class HostileGuestTransportTest {
    private static final long MEM = 1 << 20;
    private static final long FEATURES =
            VirtioFeatures.VERSION_1 | VirtioFeatures.RING_INDIRECT_DESC | VirtioFeatures.RING_EVENT_IDX;

    private final OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(MEM);
    private final Logger kickplug = Logger.getLogger("io.kickplug");
    /** EventLoopThread logs whatever escaped a task at SEVERE, with the exception. */
    private final HostFailures capture = new HostFailures();
    private Guest victim;
    private Guest bystander;

    /** One device as its driver sees it: registers, a raw ring and the interrupt line. */
    private final class Guest {
        final EchoDevice device = new EchoDevice(1, VirtioFeatures.RING_INDIRECT_DESC | VirtioFeatures.RING_EVENT_IDX);
        final MmioTransport mmio = new MmioTransport(device, mem, new VirtqueueFactoryComponent());
        final Semaphore irq = new Semaphore(0);
        final AtomicInteger raised = new AtomicInteger();
        final long base;
        RawRing ring;

        Guest(long base) {
            this.base = base;
            mmio.connectInterrupts(v -> {
                raised.incrementAndGet();
                irq.release();
            });
        }

        long r(int off) {
            return mmio.read(off, 4);
        }

        void w(int off, long v) {
            mmio.write(off, 4, v);
        }

        /** Section 3.1.1 up to FEATURES_OK and queue 0 set up on a fresh ring; not yet DRIVER_OK. */
        void negotiate() {
            w(STATUS, 0);
            ring = new RawRing(mem, 8, base);
            w(STATUS, DeviceStatus.ACKNOWLEDGE);
            w(STATUS, DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER);
            w(DRIVER_FEATURES_SEL, 0);
            w(DRIVER_FEATURES, FEATURES & 0xffffffffL);
            w(DRIVER_FEATURES_SEL, 1);
            w(DRIVER_FEATURES, FEATURES >>> 32);
            w(STATUS, DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER | DeviceStatus.FEATURES_OK);
            assertNotEquals(0, r(STATUS) & DeviceStatus.FEATURES_OK);
            w(QUEUE_SEL, 0);
            w(QUEUE_NUM, 8);
            w(QUEUE_DESC_LOW, ring.layout().descTable());
            w(QUEUE_DESC_HIGH, 0);
            w(QUEUE_DRIVER_LOW, ring.layout().availRing());
            w(QUEUE_DRIVER_HIGH, 0);
            w(QUEUE_DEVICE_LOW, ring.layout().usedRing());
            w(QUEUE_DEVICE_HIGH, 0);
            w(QUEUE_READY, 1);
        }

        void driverOk() {
            w(STATUS, r(STATUS) | DeviceStatus.DRIVER_OK);
            assertTrue(mmio.function().isActive());
        }

        void init() {
            negotiate();
            driverOk();
        }

        /** A well-formed request: 16 readable bytes, 4 writable bytes; waits for its used-buffer interrupt. */
        void serveOneRequest() throws InterruptedException {
            long d = ring.dataArea();
            int used = ring.usedIdx();
            int head = used % 4 * 2;
            ring.desc(head, d, 16, NEXT, head + 1).desc(head + 1, d + 0x100, 4, WRITE, 0).makeAvailable(head);
            mem.writeU8(d + 0x103, (byte) 0);
            // EVENT_IDX (section 2.7.7): ask for an interrupt when this entry is used, as Linux's
            // virtqueue_enable_cb does.
            ring.setUsedEvent(used);
            irq.drainPermits();
            w(QUEUE_NOTIFY, 0);
            assertTrue(irq.tryAcquire(10, TimeUnit.SECONDS), "used-buffer interrupt");
            assertEquals(INT_USED_BUFFER, r(INTERRUPT_STATUS) & INT_USED_BUFFER);
            w(INTERRUPT_ACK, INT_USED_BUFFER);
            assertEquals(used + 1, ring.usedIdx());
            assertEquals(head, ring.usedId(used));
            assertEquals(4, ring.usedLen(used));
            assertEquals(0x5a, mem.readU8(d + 0x103));
            assertEquals(0, r(STATUS) & DeviceStatus.DEVICE_NEEDS_RESET);
        }

        void close() {
            mmio.close();
            device.close();
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        kickplug.addHandler(capture);
        victim = new Guest(0);
        bystander = new Guest(0x80000);
        bystander.init();
        bystander.serveOneRequest();
    }

    @AfterEach
    void tearDown() {
        victim.close();
        bystander.close();
        kickplug.removeHandler(capture);
    }

    /**
     * Runs a ring attack against the victim and checks the outcome the brief asks for: DEVICE_NEEDS_RESET
     * for the rule of {@code section}, a configuration-change interrupt, nothing consumed, nothing leaked,
     * both I/O threads alive, the bystander healthy and the victim usable again after a reset.
     */
    private void ringAttack(String section, Consumer<RawRing> attack) throws Exception {
        victim.init();
        attack.accept(victim.ring);
        victim.w(QUEUE_NOTIFY, 0);
        // Section 2.1.2: with DRIVER_OK set the device MUST send a configuration-change notification.
        assertTrue(victim.irq.tryAcquire(10, TimeUnit.SECONDS), "configuration-change interrupt");
        assertEquals(INT_CONFIG_CHANGE, victim.r(INTERRUPT_STATUS) & INT_CONFIG_CHANGE);
        assertNotEquals(0, victim.r(STATUS) & DeviceStatus.DEVICE_NEEDS_RESET, "section 2.1.2: DEVICE_NEEDS_RESET");
        String fault = victim.mmio.function().lastFault();
        assertNotNull(fault);
        assertTrue(fault.endsWith("(VIRTIO 1.2 section " + section + ")"), fault);
        assertEquals(0, victim.ring.usedIdx(), "nothing of the bad chain was used");
        assertEquals(1, victim.device.faults.get());
        hostHealthy();
        // Later notifies while the latch is set are ignored, not re-faulted.
        victim.w(QUEUE_NOTIFY, 0);
        victim.device.awaitIdle();
        assertEquals(1, victim.device.faults.get());
        // Section 2.4: a reset clears the latch; the driver can start over.
        victim.w(STATUS, 0);
        assertEquals(0, victim.r(STATUS));
        assertEquals(0, victim.r(INTERRUPT_STATUS));
        victim.init();
        victim.serveOneRequest();
    }

    /** No exception escaped into an I/O thread, both still run tasks, the second device still serves. */
    private void hostHealthy() throws Exception {
        victim.device.awaitIdle();
        bystander.device.awaitIdle();
        capture.assertNone("exception escaped into the host");
        bystander.serveOneRequest();
    }

    @Test
    void loopedChain() throws Exception {
        // Section 2.7.5.2: a chain must not loop.
        ringAttack("2.7.5.2", r -> {
            long d = r.dataArea();
            r.desc(0, d, 16, NEXT, 1).desc(1, d + 16, 16, NEXT, 0).makeAvailable(0);
        });
    }

    @Test
    void nextOutOfRange() throws Exception {
        // Section 2.7.5.2: next names a descriptor of the table (size 8).
        ringAttack("2.7.5.2", r -> r.desc(0, r.dataArea(), 16, NEXT, 8).makeAvailable(0));
    }

    @Test
    void indirectInsideIndirect() throws Exception {
        // Section 2.7.5.3.1: an indirect table must not contain an INDIRECT descriptor.
        ringAttack("2.7.5.3.1", r -> {
            long d = r.dataArea();
            long t1 = d + 0x1000;
            long t2 = d + 0x2000;
            r.indirectDesc(t2, 0, d, 16, 0, 0);
            r.indirectDesc(t1, 0, t2, 16, INDIRECT, 0);
            r.desc(0, t1, 16, INDIRECT, 0).makeAvailable(0);
        });
    }

    @Test
    void zeroLengthIndirectTable() throws Exception {
        // Section 2.7.5.3.1: the table length is a non-zero multiple of 16.
        ringAttack("2.7.5.3.1", r -> r.desc(0, r.dataArea() + 0x1000, 0, INDIRECT, 0).makeAvailable(0));
    }

    @Test
    void misalignedIndirectTableLength() throws Exception {
        // Section 2.7.5.3.1: 24 bytes is a table of one and a half descriptors.
        ringAttack("2.7.5.3.1", r -> {
            long t = r.dataArea() + 0x1000;
            r.indirectDesc(t, 0, r.dataArea(), 16, 0, 0);
            r.desc(0, t, 24, INDIRECT, 0).makeAvailable(0);
        });
    }

    @Test
    void availIndexJumpsPastQueueSize() throws Exception {
        // Section 2.7.6: 9 new entries in a queue of 8 cannot be.
        ringAttack("2.7.6", r -> r.desc(0, r.dataArea(), 16, 0, 0).setAvailIdx(9));
    }

    @Test
    void writableThenReadable() throws Exception {
        // Section 2.7.4.2: device-readable descriptors come before device-writable ones.
        ringAttack("2.7.4.2", r -> {
            long d = r.dataArea();
            r.desc(0, d, 16, WRITE | NEXT, 1).desc(1, d + 16, 16, 0, 0).makeAvailable(0);
        });
    }

    @Test
    void descriptorAddressPastEndOfMemory() throws Exception {
        // Section 2.7.5: a buffer lies in guest memory (1 MiB here).
        ringAttack("2.7.5", r -> r.desc(0, MEM, 16, 0, 0).makeAvailable(0));
    }

    @Test
    void addressPlusLengthOverflows() throws Exception {
        // Section 2.7.5: address + length wraps past 2^64.
        ringAttack("2.7.5", r -> r.desc(0, 0xffff_ffff_ffff_ff00L, 0x1000, 0, 0).makeAvailable(0));
    }

    @Test
    void notifyForNonExistentQueue() throws Exception {
        // QEMU's nxvirtq case: a notify for a queue the device does not have has nothing to act on and is
        // ignored; it is not a reason for DEVICE_NEEDS_RESET.
        victim.init();
        victim.w(QUEUE_NOTIFY, 1);
        victim.w(QUEUE_NOTIFY, 0xffff);
        victim.w(QUEUE_NOTIFY, 0xffffffffL);
        victim.device.awaitIdle();
        assertEquals(3, victim.mmio.function().ignoredNotifies());
        assertEquals(0, victim.device.notifies.get());
        assertEquals(0, victim.r(STATUS) & DeviceStatus.DEVICE_NEEDS_RESET);
        assertEquals(0, victim.r(INTERRUPT_STATUS));
        assertEquals(0, victim.raised.get(), "no interrupt");
        hostHealthy();
        victim.serveOneRequest();
    }

    @Test
    void queueNotifiedBeforeDriverOk() throws Exception {
        // Section 2.1.2: the device MUST NOT consume buffers before DRIVER_OK; the notify is ignored.
        victim.negotiate();
        long d = victim.ring.dataArea();
        victim.ring.desc(0, d, 16, NEXT, 1).desc(1, d + 0x100, 4, WRITE, 0).makeAvailable(0);
        victim.w(QUEUE_NOTIFY, 0);
        victim.device.awaitIdle();
        assertEquals(1, victim.mmio.function().ignoredNotifies());
        assertEquals(0, victim.device.notifies.get());
        assertEquals(0, victim.ring.usedIdx(), "nothing consumed before DRIVER_OK");
        assertEquals(0, victim.r(STATUS) & DeviceStatus.DEVICE_NEEDS_RESET);
        assertEquals(0, victim.raised.get(), "no interrupt");
        hostHealthy();
        // After DRIVER_OK the same chain is served on the next notify.
        victim.driverOk();
        victim.w(QUEUE_NOTIFY, 0);
        assertTrue(victim.irq.tryAcquire(10, TimeUnit.SECONDS));
        assertEquals(1, victim.ring.usedIdx());
        assertEquals(0x5a, mem.readU8(d + 0x103));
    }

    /**
     * Found by MmioTransportFuzzTest (shrunk sample: handshake, QueueSel := 0xffffffff, read QueueNumMax):
     * the selector is an unsigned 32-bit register, and reading QueueNumMax or QueueReady with it threw
     * ArrayIndexOutOfBoundsException (index -1) into the vCPU thread. Section 4.2.2: a queue that does
     * not exist reads QueueNumMax 0 (and is not ready); writes to its registers are ignored.
     */
    @Test
    void queueSelAllOnesThenReadQueueNumMaxAndQueueReady() throws Exception {
        victim.init();
        for (long sel : new long[] {0xffffffffL, 0x80000000L, 1}) {
            victim.w(QUEUE_SEL, sel);
            assertEquals(0, victim.r(QUEUE_NUM_MAX), "QueueNumMax of missing queue " + sel);
            assertEquals(0, victim.r(QUEUE_READY), "QueueReady of missing queue " + sel);
            victim.w(QUEUE_NUM, 4);
            victim.w(QUEUE_READY, 1);
            assertEquals(0, victim.r(QUEUE_READY));
        }
        victim.w(QUEUE_SEL, 0);
        assertEquals(64, victim.r(QUEUE_NUM_MAX));
        assertEquals(0, victim.r(STATUS) & DeviceStatus.DEVICE_NEEDS_RESET);
        hostHealthy();
        victim.serveOneRequest();
    }
}
