package io.kickplug.virtio.queue;

import static io.kickplug.virtio.testkit.RawRing.*;
import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.virtio.AvailEventMode;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.ChainWriter;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.testkit.RawRing;
import java.nio.BufferOverflowException;
import java.util.List;
import org.junit.jupiter.api.Test;

class SplitDeviceQueueTest {
    private static final long ALL = VirtioFeatures.RING_EVENT_IDX | VirtioFeatures.RING_INDIRECT_DESC;

    private final OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(1 << 20);

    /** The chain's buffer count and its readable and writable byte totals. */
    private static void assertBuffers(DescriptorChain c, int buffers, long readable, long writable) {
        assertEquals(buffers, c.bufferCount(), "buffers");
        assertEquals(readable, c.readableBytes(), "readable bytes");
        assertEquals(writable, c.writableBytes(), "writable bytes");
    }

    @Test
    void threeDescriptorChainIsReadAndWrittenThroughCursors() {
        RawRing ring = new RawRing(mem, 16, 0);
        long d = ring.dataArea();
        mem.write(d, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 0, 16);
        ring.desc(3, d, 16, NEXT, 7).desc(7, d + 0x100, 512, NEXT | WRITE, 1).desc(1, d + 0x400, 1, WRITE, 0)
                .makeAvailable(3);
        SplitDeviceQueue q = new SplitDeviceQueue(mem, 0, ring.layout(), 0);
        DescriptorChain c = q.pop();
        assertNotNull(c);
        assertEquals(3, c.head());
        assertBuffers(c, 3, 16, 513);
        ChainReader r = c.reader();
        assertEquals(0x04030201, r.readU32());
        assertEquals(0x0C0B0A0908070605L, r.readU64());
        assertEquals(4, r.remaining());
        ChainWriter w = c.writer();
        ChainWriter status = w.splitAt(w.remaining() - 1);
        assertEquals(512, w.remaining());
        w.writeZeroes(512);
        assertThrows(BufferOverflowException.class, () -> w.writeU8(1));
        status.writeU8(0xab);
        assertEquals((byte) 0xab, mem.readU8(d + 0x400));
        q.pushUsed(c.head(), 513);
        assertEquals(1, ring.usedIdx());
        assertEquals(3, ring.usedId(0));
        assertEquals(513, ring.usedLen(0));
        assertNull(q.pop());
    }

    @Test
    void readerCrossesDescriptorBoundariesWhateverTheFraming() {
        // Section 2.7.4: the device makes no assumption about framing; 16 header bytes split 5 + 11.
        RawRing ring = new RawRing(mem, 8, 0);
        long d = ring.dataArea();
        for (int i = 0; i < 16; i++) {
            mem.writeU8(d + (i < 5 ? i : 0x100 + i - 5), (byte) (i + 1));
        }
        ring.desc(0, d, 5, NEXT, 1).desc(1, d + 0x100, 11, 0, 0).makeAvailable(0);
        DescriptorChain c = new SplitDeviceQueue(mem, 0, ring.layout(), 0).pop();
        ChainReader r = c.reader();
        byte[] all = new byte[16];
        r.read(all, 0, 16);
        for (int i = 0; i < 16; i++) {
            assertEquals(i + 1, all[i]);
        }
        assertEquals(0, c.writer().remaining());
    }

    @Test
    void indirectTableIsFollowedAndPointerWriteFlagIgnored() {
        RawRing ring = new RawRing(mem, 8, 0);
        long d = ring.dataArea();
        long table = d + 0x1000;
        ring.indirectDesc(table, 0, d, 16, NEXT, 1).indirectDesc(table, 1, d + 0x100, 4096, NEXT | WRITE, 2)
                .indirectDesc(table, 2, d + 0x2000, 1, WRITE, 0);
        // Section 2.7.5.3.2: the WRITE flag on the pointer descriptor is ignored.
        ring.desc(5, table, 48, INDIRECT | WRITE, 0).makeAvailable(5);
        DescriptorChain c = new SplitDeviceQueue(mem, 0, ring.layout(), ALL).pop();
        assertEquals(5, c.head());
        assertBuffers(c, 3, 16, 4097);
    }

    @Test
    void directDescriptorsFollowedByOneIndirect() {
        // Section 2.7.5.3.2: N normal descriptors followed by one INDIRECT must be handled.
        RawRing ring = new RawRing(mem, 8, 0);
        long d = ring.dataArea();
        long table = d + 0x1000;
        ring.indirectDesc(table, 0, d + 0x100, 512, WRITE, 0);
        ring.desc(0, d, 16, NEXT, 1).desc(1, table, 16, INDIRECT, 0).makeAvailable(0);
        DescriptorChain c = new SplitDeviceQueue(mem, 0, ring.layout(), ALL).pop();
        assertBuffers(c, 2, 16, 512);
    }

    @Test
    void usedNotificationFollowsNoInterruptFlagWithoutEventIdx() {
        // Section 2.7.7.2: flags == 1 SHOULD NOT notify, flags == 0 MUST notify.
        RawRing ring = new RawRing(mem, 8, 0);
        long d = ring.dataArea();
        SplitDeviceQueue q = new SplitDeviceQueue(mem, 0, ring.layout(), 0);
        ring.desc(0, d, 1, WRITE, 0).makeAvailable(0);
        q.pushUsed(q.pop().head(), 1);
        assertTrue(q.needsNotification());
        assertFalse(q.needsNotification(), "nothing pushed since: no notification");
        ring.setAvailFlags(1).makeAvailable(0);
        q.pushUsed(q.pop().head(), 1);
        assertFalse(q.needsNotification());
    }

    @Test
    void eventIdxSuppressesUntilUsedEventIsReached() {
        // After QEMU's qtest "idx": used_event set ahead -> no interrupt; the completion that reaches it
        // raises exactly one (section 2.7.7.2 with EVENT_IDX).
        RawRing ring = new RawRing(mem, 8, 0);
        long d = ring.dataArea();
        SplitDeviceQueue q = new SplitDeviceQueue(mem, 0, ring.layout(), VirtioFeatures.RING_EVENT_IDX);
        ring.desc(0, d, 1, WRITE, 0).desc(1, d + 8, 1, WRITE, 0).desc(2, d + 16, 1, WRITE, 0);
        // First completion: notified (no previous signal to compare with), used idx becomes 1.
        ring.makeAvailable(0);
        q.pushUsed(q.pop().head(), 1);
        assertTrue(q.needsNotification());
        // The driver asks to be told only once the entry at index 2 is used (used idx moves 2 -> 3).
        ring.setUsedEvent(2).makeAvailable(1);
        q.pushUsed(q.pop().head(), 1);
        assertFalse(q.needsNotification(), "used idx 2 has not passed used_event 2");
        ring.makeAvailable(2);
        q.pushUsed(q.pop().head(), 1);
        assertTrue(q.needsNotification(), "used idx 3 passed used_event 2");
        assertFalse(q.needsNotification());
    }

    @Test
    void availNotificationSuppressionAndRecheck() {
        RawRing ring = new RawRing(mem, 8, 0);
        long d = ring.dataArea();
        SplitDeviceQueue plain = new SplitDeviceQueue(mem, 0, ring.layout(), 0);
        plain.disableNotification();
        assertEquals(1, ring.usedFlags(), "section 2.7.10.2: NO_NOTIFY set");
        assertFalse(plain.enableNotification());
        assertEquals(0, ring.usedFlags());
        ring.desc(0, d, 1, WRITE, 0).makeAvailable(0);
        // A buffer that arrived while notifications were off is found by the re-check.
        assertTrue(plain.enableNotification());
        assertNotNull(plain.pop());

        RawRing ring2 = new RawRing(mem, 8, 0x8000);
        SplitDeviceQueue ev = new SplitDeviceQueue(mem, 1, ring2.layout(), VirtioFeatures.RING_EVENT_IDX);
        ring2.desc(0, d, 1, WRITE, 0).makeAvailable(0);
        assertNotNull(ev.pop());
        assertFalse(ev.enableNotification());
        assertEquals(1, ring2.availEvent(), "section 2.7.10.2: avail_event = next entry the device looks at");
        assertEquals(0, ring2.usedFlags(), "with EVENT_IDX the device keeps flags 0");
    }

    // Section 2.7.10 with EVENT_IDX: in pop mode (QEMU's virtqueue_split_pop) avail_event follows every pop, so
    // the driver's next buffer after the device's last pop notifies even while the device still drains; in enable
    // mode (Linux vhost) a pop leaves it where the last enableNotification put it.
    @Test
    void availEventFollowsEveryPopInPopModeOnly() {
        RawRing pops = new RawRing(mem, 8, 0);
        RawRing enables = new RawRing(mem, 8, 0x8000);
        long d = pops.dataArea();
        SplitDeviceQueue qemu = new SplitDeviceQueue(mem, 0, pops.layout(), VirtioFeatures.RING_EVENT_IDX);
        SplitDeviceQueue vhost = new SplitDeviceQueue(mem, 1, enables.layout(), VirtioFeatures.RING_EVENT_IDX);
        qemu.setAvailEventMode(AvailEventMode.POP);
        vhost.setAvailEventMode(AvailEventMode.ENABLE);
        for (RawRing r : List.of(pops, enables)) {
            r.desc(0, d, 1, WRITE, 0).desc(1, d, 1, WRITE, 0).desc(2, d, 1, WRITE, 0).makeAvailable(0)
                    .makeAvailable(1).makeAvailable(2);
        }
        for (int i = 1; i <= 3; i++) {
            assertNotNull(qemu.pop());
            assertEquals(i, pops.availEvent(), "avail_event after pop " + i);
            assertNotNull(vhost.pop());
            assertEquals(0, enables.availEvent(), "enable mode: a pop does not move avail_event");
        }
        assertFalse(vhost.enableNotification());
        assertEquals(3, enables.availEvent(), "enable mode: published when notifications are re-enabled");
        assertEquals(0, pops.usedFlags(), "with EVENT_IDX the device keeps flags 0");

        // Without EVENT_IDX the field does not exist for the driver: pop mode writes nothing there.
        RawRing plainRing = new RawRing(mem, 8, 0x10000);
        SplitDeviceQueue plain = new SplitDeviceQueue(mem, 2, plainRing.layout(), 0);
        plain.setAvailEventMode(AvailEventMode.POP);
        plainRing.desc(0, d, 1, WRITE, 0).makeAvailable(0);
        assertNotNull(plain.pop());
        assertEquals(0, plainRing.availEvent());
    }

    /**
     * The poll-queue sequence of the stall report (no call descriptor, EVENT_IDX), step by step on one thread:
     * used_event 0; three requests added one by one, each kicked only when {@code vring_need_event(avail_event, new,
     * old)} says so (section 2.7.10); the device drains on each kick and may sleep only after enableNotification()
     * found the ring empty; one request completes; the driver sets used_event to the used index it saw and adds a
     * fourth. However the device publishes avail_event (at enable or at every pop) and whether it polled the ring
     * (notifications off, a drain that leaves them off, then on again as the I/O thread's poll window ends), every
     * add after the device went to sleep must be kicked, or the sleeping device never sees it.
     */
    @Test
    void everyRequestAddedWhileTheDeviceSleepsIsKickedWithRequestsInFlight() {
        long base = 0;
        for (AvailEventMode mode : AvailEventMode.values()) {
            for (boolean polled : new boolean[] {false, true}) {
                String how = mode.id() + (polled ? ", polled" : "");
                RawRing ring = new RawRing(mem, 256, base); // zeroes the ring: made before the driver threads it
                base += 0x8000;
                SplitDriverQueue drv = new SplitDriverQueue(mem, ring.layout(), VirtioFeatures.RING_EVENT_IDX, -1, 0);
                SplitDeviceQueue dev = new SplitDeviceQueue(mem, 0, ring.layout(), VirtioFeatures.RING_EVENT_IDX);
                dev.setAvailEventMode(mode);
                drv.disableCallbacks(); // a poll queue: the driver reaps without interrupts
                ring.setUsedEvent(0);
                assertFalse(dev.enableNotification(), how + ": the activation finds the ring empty");
                for (int i = 0; i < 3; i++) {
                    addRequest(drv, i);
                    assertTrue(drv.kickPrepare(), how + ": request " + i + " passed avail_event " + ring.availEvent());
                    drainAndSleep(dev, polled);
                }
                assertEquals(3, dev.nextAvail(), how + ": the device took the three requests");
                dev.pushUsed(0, 1);
                dev.needsNotification(); // no call descriptor: the decision goes nowhere
                assertNotNull(drv.getUsed(), how);
                ring.setUsedEvent(ring.usedIdx());
                addRequest(drv, 3);
                assertTrue(drv.kickPrepare(), how + ": the fourth request passed avail_event " + ring.availEvent());
                assertNotNull(dev.pop(), how);
            }
        }
    }

    /** A virtio-blk write's chain: header, 4 KiB of data, status byte. */
    private static void addRequest(SplitDriverQueue drv, int token) {
        assertTrue(drv.add(List.of(BufferSpec.readable(0x80000, 16), BufferSpec.readable(0x81000, 4096),
                BufferSpec.writable(0x80010, 1)), false, token));
    }

    /**
     * What the I/O thread does on a kick before it sleeps: QueueWorker's drain loop, or, when it polls, its poll-mode
     * drain (notifications left off) and then the end of the poll window (notifications on, re-check, drain again).
     */
    private static void drainAndSleep(SplitDeviceQueue dev, boolean polled) {
        if (polled) {
            dev.disableNotification(); // pollBegin
            while (dev.pop() != null) {
                // taken; the backend runs it
            }
            while (dev.enableNotification()) { // pollEnd, then the loop's last poll
                dev.disableNotification();
                while (dev.pop() != null) {
                    // taken
                }
            }
            return;
        }
        do {
            dev.disableNotification();
            while (dev.pop() != null) {
                // taken
            }
        } while (dev.enableNotification());
    }

    @Test
    void driverAndDeviceViewsAgreeOnIndirectChains() {
        QueueLayout layout = QueueLayout.contiguous(16, 0);
        long indirectArea = 0x10000;
        SplitDriverQueue drv = new SplitDriverQueue(mem, layout, ALL, indirectArea, 8);
        SplitDeviceQueue dev = new SplitDeviceQueue(mem, 0, layout, ALL);
        assertTrue(drv.add(List.of(BufferSpec.readable(0x40000, 16), BufferSpec.writable(0x41000, 4096),
                BufferSpec.writable(0x43000, 1)), true, "req"));
        assertEquals(15, drv.freeDescriptors(), "an indirect chain takes one descriptor");
        assertTrue(drv.kickPrepare(), "fresh ring: avail_event 0 is passed by the first add");
        DescriptorChain c = dev.pop();
        assertEquals(3, c.bufferCount());
        dev.pushUsed(c.head(), 4097);
        assertTrue(dev.needsNotification());
        UsedBuffer u = drv.getUsed();
        assertEquals("req", u.token());
        assertEquals(4097, u.writtenBytes());
        assertEquals(16, drv.freeDescriptors());
    }

    @Test
    void kickPrepareHonoursAvailEventAndNoNotify() {
        QueueLayout layout = QueueLayout.contiguous(8, 0);
        SplitDriverQueue drv = new SplitDriverQueue(mem, layout, VirtioFeatures.RING_EVENT_IDX, -1, 0);
        SplitDeviceQueue dev = new SplitDeviceQueue(mem, 0, layout, VirtioFeatures.RING_EVENT_IDX);
        drv.add(List.of(BufferSpec.writable(0x40000, 1)), false, 1);
        assertTrue(drv.kickPrepare());
        // The device is draining with notifications off: avail_event stays at 0, so no more kicks.
        dev.disableNotification();
        drv.add(List.of(BufferSpec.writable(0x40000, 1)), false, 2);
        assertFalse(drv.kickPrepare());
        // Re-enabled: avail_event = next_avail (0), already passed -> the device re-checks by itself.
        assertTrue(dev.enableNotification());
        dev.pop();
        dev.pop();
        assertFalse(dev.enableNotification());
        drv.add(List.of(BufferSpec.writable(0x40000, 1)), false, 3);
        assertTrue(drv.kickPrepare(), "the add crossed avail_event 2");

        QueueLayout l2 = QueueLayout.contiguous(8, 0x8000);
        SplitDriverQueue d2 = new SplitDriverQueue(mem, l2, 0, -1, 0);
        SplitDeviceQueue q2 = new SplitDeviceQueue(mem, 1, l2, 0);
        q2.disableNotification();
        d2.add(List.of(BufferSpec.writable(0x40000, 1)), false, 1);
        assertFalse(d2.kickPrepare(), "section 2.7.10: NO_NOTIFY set by the device");
    }

    /**
     * Section 2.7.10 with EVENT_IDX: notifications turned off after a re-enable are off. The I/O thread's sequence
     * when it polls: a drain ends with enableNotification() (avail_event = the driver's next entry), then its poll
     * window begins with disableNotification(). That left avail_event where it was, so the driver's next add
     * notified while the device polled (VirtioBlkDevicePollTest, eventIdx=true: no request found by polling, the
     * kick got there first). Off means no notification until the device re-enables, in both avail_event modes.
     */
    @Test
    void disableNotificationAfterAReEnableStopsTheNextKickWithEventIdx() {
        long base = 0;
        for (AvailEventMode mode : AvailEventMode.values()) {
            RawRing ring = new RawRing(mem, 64, base);
            base += 0x8000;
            SplitDriverQueue drv = new SplitDriverQueue(mem, ring.layout(), VirtioFeatures.RING_EVENT_IDX, -1, 0);
            SplitDeviceQueue dev = new SplitDeviceQueue(mem, 0, ring.layout(), VirtioFeatures.RING_EVENT_IDX);
            dev.setAvailEventMode(mode);
            int taken = 0;
            for (int i = 0; i < 3; i++) {
                addRequest(drv, i);
                assertTrue(drv.kickPrepare(), mode.id() + ": request " + i + " added while the device sleeps");
                drainAndSleep(dev, false);
                taken++;
                assertEquals(taken, ring.availEvent(), mode.id() + ": re-enabled at the driver's next entry");
                dev.disableNotification(); // the poll window begins
                addRequest(drv, 100 + i);
                assertFalse(drv.kickPrepare(), mode.id() + ": an add while notifications are off is not kicked "
                        + "(avail_event " + ring.availEvent() + ", next entry " + taken + ")");
                addRequest(drv, 200 + i);
                addRequest(drv, 300 + i);
                assertFalse(drv.kickPrepare(), mode.id() + ": nor a batch of two after it");
                assertTrue(dev.hasAvailable(), mode.id() + ": the poll finds them");
                // The window ends: notifications on, the re-check finds the entries, the drain takes them.
                assertTrue(dev.enableNotification(), mode.id());
                drainAndSleep(dev, false);
                taken += 3;
                assertEquals(taken, dev.nextAvail(), mode.id());
            }
            addRequest(drv, 400);
            assertTrue(drv.kickPrepare(), mode.id() + ": re-enabled, the next add is kicked again");
        }
    }

    @Test
    void enableCallbacksDelayedAsksForThreeQuarters() {
        QueueLayout layout = QueueLayout.contiguous(16, 0);
        SplitDriverQueue drv = new SplitDriverQueue(mem, layout, VirtioFeatures.RING_EVENT_IDX, -1, 0);
        for (int i = 0; i < 8; i++) {
            drv.add(List.of(BufferSpec.writable(0x40000, 1)), false, i);
        }
        drv.disableCallbacks();
        assertTrue(drv.enableCallbacksDelayed());
        assertEquals(6, drv.usedEvent(), "3/4 of 8 outstanding");
    }

    @Test
    void detachUnusedReturnsTokensAfterReset() {
        QueueLayout layout = QueueLayout.contiguous(8, 0);
        SplitDriverQueue drv = new SplitDriverQueue(mem, layout, 0, -1, 0);
        drv.add(List.of(BufferSpec.writable(0x40000, 1)), false, "a");
        drv.add(List.of(BufferSpec.readable(0x40000, 1), BufferSpec.writable(0x40010, 1)), false, "b");
        assertEquals(List.of("a", "b"), drv.detachUnused());
        assertEquals(8, drv.freeDescriptors());
        assertEquals(0, drv.inFlight());
    }

    @Test
    void pushOfAHeadNotInFlightIsADeviceBug() {
        RawRing ring = new RawRing(mem, 8, 0);
        SplitDeviceQueue q = new SplitDeviceQueue(mem, 0, ring.layout(), 0);
        assertThrows(IllegalStateException.class, () -> q.pushUsed(0, 0));
    }

    @Test
    void queueSetupIsValidated() {
        // Section 2.7: power-of-two sizes up to 32768, aligned parts, inside memory.
        assertThrows(GuestFaultException.class, () -> new SplitDeviceQueue(mem, 0, new QueueLayout(6, 0, 0x100,
                0x200), 0));
        assertThrows(GuestFaultException.class, () -> new SplitDeviceQueue(mem, 0, new QueueLayout(65536, 0,
                0x100000, 0x200000), 0));
        assertThrows(GuestFaultException.class, () -> new SplitDeviceQueue(mem, 0, new QueueLayout(8, 8, 0x100,
                0x200), 0));
        assertThrows(GuestFaultException.class, () -> new SplitDeviceQueue(mem, 0, new QueueLayout(8, 0, 0x101,
                0x200), 0));
        assertThrows(GuestFaultException.class, () -> new SplitDeviceQueue(mem, 0, new QueueLayout(8, 0, 0x100,
                0x202), 0));
        assertThrows(GuestFaultException.class, () -> new SplitDeviceQueue(mem, 0, new QueueLayout(8, 0, 0x100,
                (1 << 20) - 16), 0));
    }

    @Test
    void popHeadTakesAChainWithoutTheAvailableRingAndChecksItLikePop() {
        RawRing ring = new RawRing(mem, 8, 0);
        long d = ring.dataArea();
        ring.desc(2, d, 16, NEXT, 4).desc(4, d + 0x100, 1, WRITE, 0);
        SplitDeviceQueue q = new SplitDeviceQueue(mem, 0, ring.layout(), 0);
        DescriptorChain c = q.popHead(2);
        assertEquals(2, c.head());
        assertEquals(2, c.bufferCount());
        assertEquals(0, q.nextAvail(), "the available ring is not touched");
        assertFalse(q.hasAvailable());
        // Section 2.7.13: a head the device holds cannot be taken twice.
        assertThrows(GuestFaultException.class, () -> q.popHead(2));
        SplitDeviceQueue q2 = new SplitDeviceQueue(mem, 0, ring.layout(), 0);
        // Section 2.7.6: a head is an index into the descriptor table.
        assertThrows(GuestFaultException.class, () -> q2.popHead(8));
        assertTrue(q2.isBroken());
        SplitDeviceQueue q3 = new SplitDeviceQueue(mem, 0, ring.layout(), 0);
        q3.popHead(2);
        q3.pushUsed(2, 1);
        assertEquals(1, q3.nextUsed(), "a resubmitted head is pushed like any other");
    }
}
