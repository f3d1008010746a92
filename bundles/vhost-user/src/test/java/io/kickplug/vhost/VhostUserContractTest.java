package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.vhost.backend.SessionStatus;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.vhost.testsupport.Pipes;
import io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.testkit.Await;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.newsclub.net.unix.AFPipe;

/**
 * The transport contract over vhost-user, for split (VIRTIO 1.2 section 2.7) and packed rings (section 2.8,
 * VIRTIO_F_RING_PACKED), each with EVENT_IDX on and off where it matters: what {@code TransportContractTest}
 * checks register by register on MMIO and PCI, as far as it applies to a vhost-user back-end (which has no
 * status register, configuration generation or interrupt cause: the front-end owns those). Feature negotiation
 * (the packed bit offered only with the packed ring bundle), queue set-up with the format's layout, I/O in both
 * directions with verify across several laps of the ring, notification suppression in both directions, stop
 * with GET_VRING_BASE (the packed base with its wrap counters) and restart at the returned base, reset, and
 * hostile input that ends in an error rather than a hang.
 */
class VhostUserContractTest extends ExportedDiskFixture {

    /** Every ring format with EVENT_IDX on and off. */
    static Stream<Arguments> formatsAndEventIdx() {
        return Arrays.stream(RingFormat.values()).flatMap(f -> Stream.of(Arguments.of(f, true), Arguments.of(f, false)));
    }

    @Override
    ExportedDisk export() throws Exception {
        // Both ring bundles behind the export, as in the runtime (VhostUserServer gets the RingSelector).
        return new ExportedDisk("ct", new MemoryBackend(4 << 20, false), 2, 2, dir.resolve("vhost.sock"),
                RingSelector.of(new VirtqueueFactoryComponent(), new PackedVirtqueueFactoryComponent()));
    }

    private static long wanted(RingFormat format, boolean eventIdx) {
        return (eventIdx ? VirtioFeatures.RING_EVENT_IDX : 0) | VirtioBlk.F_MQ | VirtioBlk.F_FLUSH | format.feature();
    }

    private SessionStatus status() {
        return disk.server.status().connection();
    }

    // Features (section 2.2).

    @ParameterizedTest(name = "{0}")
    @EnumSource(RingFormat.class)
    void theRingFormatIsNegotiatedThroughItsFeatureBit(RingFormat format) throws Exception {
        long offered = client.getU64(VhostUser.GET_FEATURES);
        assertEquals(VirtioFeatures.RING_PACKED, offered & VirtioFeatures.RING_PACKED,
                "bit 34 is offered when the packed ring bundle is there");
        client.negotiate(wanted(format, true));
        assertEquals(format, client.ringFormat());
        assertEquals(client.features(), status().features(), "the back-end acked what the front-end set");
        assertEquals(format == RingFormat.PACKED, (status().features() & VirtioFeatures.RING_PACKED) != 0);
        Queue q = client.startQueue(0, client.initialBase(), false);
        client.writeReadVerify(q, 8, (byte) 0x31, true);
    }

    @Test
    void withoutThePackedBundleBit34IsNotOfferedAndRefused() throws Exception {
        try (ExportedDisk splitOnly = new ExportedDisk("ct-split", new MemoryBackend(1 << 20, false), 1, 1,
                dir.resolve("split.sock"));
                FrontendClient c = splitOnly.connect(dir.resolve("split-ram"))) {
            long offered = c.getU64(VhostUser.GET_FEATURES);
            assertEquals(0, offered & VirtioFeatures.RING_PACKED, "no packed ring bundle: bit 34 not offered");
            // Asking for packed leaves the client on split.
            c.negotiate(wanted(RingFormat.PACKED, true));
            assertEquals(RingFormat.SPLIT, c.ringFormat());
            // Section 2.2.2: the device MUST NOT accept a feature it did not offer.
            assertNotEquals(0, c.sendAck(VhostUser.SET_FEATURES, Message.u64(offered | VirtioFeatures.RING_PACKED)));
            assertEquals(0, splitOnly.server.status().connection().features() & VirtioFeatures.RING_PACKED);
            c.writeReadVerify(c.startQueue(0, c.initialBase(), false), 0, (byte) 0x32, true);
        }
    }

    // Queue set-up and I/O in both directions (section 2.7 / 2.8 layouts, 5.2.6 requests).

    @ParameterizedTest(name = "{0} EVENT_IDX {1}")
    @MethodSource("formatsAndEventIdx")
    void requestsOnBothQueuesInBothDirectionsAcrossSeveralLapsOfTheRing(RingFormat format, boolean eventIdx)
            throws Exception {
        client.negotiate(wanted(format, eventIdx));
        Queue q0 = client.startQueue(0, client.initialBase(), false);
        Queue q1 = client.startQueue(1, client.initialBase(), false);
        assertEquals(2, status().runningQueues());
        // One at a time: 30 write+read pairs of 3 descriptors each go round a 64-entry ring almost three times
        // (packed: the wrap counters flip on both sides).
        for (int i = 0; i < 30; i++) {
            client.writeReadVerify(i % 2 == 0 ? q0 : q1, 8L * i, (byte) (0x40 + i), true);
        }
        // Many at a time: 16 requests in flight (48 of 64 descriptors), completed in any order.
        for (int round = 0; round < 3; round++) {
            batch(q0, 1000 + 200L * round, (byte) (0x70 + round));
        }
        assertEquals(0, status().refusals());
        assertFalse(status().needsReset());
    }

    /** 16 writes kicked once, then 16 reads of the same sectors; verifies status and data of each. */
    private void batch(Queue q, long firstSector, byte seed) throws Exception {
        int n = 16;
        byte[][] data = new byte[n][4096];
        for (int k = 0; k < n; k++) {
            Arrays.fill(data[k], (byte) (seed + k));
            client.memory.write(client.dataAddress(2 + k), data[k], 0, 4096);
            client.submitNoKick(q, 2 + k, VirtioBlk.T_OUT, firstSector + 8L * k, 4096);
        }
        q.kick();
        awaitAll(q, n, 2);
        for (int k = 0; k < n; k++) {
            assertEquals(VirtioBlk.S_OK, client.status(2 + k), "write " + k);
            client.memory.fill(client.dataAddress(2 + n + k), 4096, (byte) 0);
            client.submitNoKick(q, 2 + n + k, VirtioBlk.T_IN, firstSector + 8L * k, 4096);
        }
        q.kick();
        awaitAll(q, n, 2 + n);
        for (int k = 0; k < n; k++) {
            assertEquals(VirtioBlk.S_OK, client.status(2 + n + k), "read " + k);
            byte[] back = new byte[4096];
            client.memory.read(client.dataAddress(2 + n + k), back, 0, 4096);
            assertArrayEquals(data[k], back, "read " + k + " returns what write " + k + " wrote");
        }
    }

    private void awaitAll(Queue q, int n, int firstSlot) throws Exception {
        Set<Object> tokens = new HashSet<>();
        for (int k = 0; k < n; k++) {
            UsedBuffer u = client.awaitUsed(q, true, 10_000);
            assertTrue(tokens.add(u.token()), "slot " + u.token() + " used once");
        }
        for (int k = 0; k < n; k++) {
            assertTrue(tokens.contains(firstSlot + k), "slot " + (firstSlot + k) + " completed");
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(RingFormat.class)
    void queueSizesFollowTheRingFormat(RingFormat format) throws Exception {
        client.negotiate(wanted(format, true));
        // Section 2.7: a split ring's size is a power of two; section 2.8: a packed ring's any size up to 32768.
        long status = client.sendAck(VhostUser.SET_VRING_NUM, Message.vringState(0, 48));
        assertEquals(format == RingFormat.PACKED, status == 0, "a ring of 48 entries, status " + status);
        if (format == RingFormat.PACKED) {
            // 48 entries: 20 write+read pairs of 3 descriptors go round it two and a half times.
            Queue q = client.startQueue(0, client.initialBase(), false, 48, -1);
            for (int i = 0; i < 20; i++) {
                client.writeReadVerify(q, 8L * i, (byte) (0x20 + i), true);
            }
        }
        assertNotEquals(0, client.sendAck(VhostUser.SET_VRING_NUM, Message.vringState(0, 32769)));
    }

    // Notifications (sections 2.7.7 / 2.7.10 and 2.8.10): suppression in both directions.

    @ParameterizedTest(name = "{0} EVENT_IDX {1}")
    @MethodSource("formatsAndEventIdx")
    void theDeviceHonoursTheDriversSuppressionOfUsedBufferNotifications(RingFormat format, boolean eventIdx)
            throws Exception {
        client.negotiate(wanted(format, eventIdx));
        client.callReaders(false); // the test reads the call pipe itself
        Queue q = client.startQueue(0, client.initialBase(), false);

        // Suppressed: the driver polls the ring. The device may notify for its first decision after a start
        // (as QEMU does: it has not signalled the driver yet); the queue's I/O thread takes the decision for a
        // completion before it takes the next request, so once the first pair is used those are in the pipe.
        q.driver.disableCallbacks();
        client.writeReadVerify(q, 0, (byte) 0x50, false);
        drainCalls(q);
        client.writeReadVerify(q, 0, (byte) 0x51, false);
        // GET_VRING_BASE stops the queue, after which every notification the device sent is in the pipe.
        int base = client.stopQueue(0);
        assertEquals(0, drainCalls(q), "no used-buffer notification while the driver suppressed them");

        // Enabled (EVENT_IDX: at the next used buffer): the device notifies.
        client.restartQueue(0, base, false);
        assertTrue(q.driver.enableCallbacks(), "nothing pending");
        client.writeReadVerify(q, 8, (byte) 0x52, false);
        client.stopQueue(0);
        assertTrue(drainCalls(q) >= 1, "the device notified once the driver asked for notifications");
    }

    /** Reads what the call pipe holds without blocking; returns how many notifications it held. */
    private static int drainCalls(Queue q) throws IOException {
        AFPipe.SourceChannel source = q.callSource();
        source.configureBlocking(false);
        try {
            int n = 0;
            ByteBuffer b = ByteBuffer.allocate(8);
            while (source.read(b) > 0) {
                if (!b.hasRemaining()) {
                    n++;
                    b.clear();
                }
            }
            return n;
        } finally {
            source.configureBlocking(true);
        }
    }

    @ParameterizedTest(name = "{0} EVENT_IDX {1}")
    @MethodSource("formatsAndEventIdx")
    void anIdleDeviceAsksForAvailableBufferNotificationsAndABusyOneServesWithoutThem(RingFormat format,
            boolean eventIdx) throws Exception {
        client.negotiate(wanted(format, eventIdx));
        Queue q = client.startQueue(0, client.initialBase(), false);
        client.writeReadVerify(q, 0, (byte) 0x61, true);
        // Idle: the device re-enabled notifications after its drain (EVENT_IDX: at the next descriptor), so the
        // driver's next add needs a kick; wait for the device to have written that.
        Await.await(() -> deviceWantsKickAtNext(q, format, eventIdx), "the idle device asks for a kick");
        long kicks = status().kicks();
        client.submitNoKick(q, 0, VirtioBlk.T_IN, 0, 4096);
        assertTrue(q.driver.kickPrepare(), "section 2.7.10 / 2.8.10: the idle device wants this notification");
        q.kick();
        client.awaitUsed(q, true, 10_000);
        Await.await(() -> status().kicks() > kicks, "the back-end read the kick");
        assertEquals(VirtioBlk.S_OK, client.status(0));
    }

    /**
     * Whether the device's side of the notification suppression asks for a notification for the descriptor or
     * available index the driver fills next: split, the used ring's NO_NOTIFY flag clear or (EVENT_IDX) avail_event
     * equal to avail.idx; packed, the device event suppression structure's flags ENABLE or (EVENT_IDX) DESC with
     * desc at the driver's next position.
     */
    private boolean deviceWantsKickAtNext(Queue q, RingFormat format, boolean eventIdx) {
        QueueLayout l = q.driver.layout();
        if (format == RingFormat.SPLIT) {
            int availIdx = client.memory.readU16(l.availRing() + 2) & 0xffff;
            if (eventIdx) {
                return (client.memory.readU16(l.usedRing() + 4 + 8L * l.size()) & 0xffff) == availIdx;
            }
            return (client.memory.readU16(l.usedRing()) & 1) == 0;
        }
        int flags = client.memory.readU16(l.usedRing() + 2) & 0xffff;
        if (eventIdx) {
            return flags == 2; // RING_EVENT_FLAGS_DESC; its desc is the driver's next position (checked by kickPrepare)
        }
        return flags == 0; // RING_EVENT_FLAGS_ENABLE
    }

    // Stop, restart and reset (vhost-user "Starting and stopping rings").

    @ParameterizedTest(name = "{0}")
    @EnumSource(RingFormat.class)
    void getVringBaseStopsTheRingAndItRestartsAtTheReturnedBase(RingFormat format) throws Exception {
        client.negotiate(wanted(format, true));
        Queue q = client.startQueue(0, client.initialBase(), false);
        int requests = 0;
        for (int i = 0; i < 12; i++) { // 24 requests, 72 descriptors: packed wraps once
            client.writeReadVerify(q, 8L * i, (byte) (0x10 + i), true);
            requests += 2;
        }
        int base = client.stopQueue(0);
        assertEquals(expectedBase(format, requests), base, "GET_VRING_BASE after " + requests + " requests");
        assertEquals(0, status().runningQueues(), "the ring stopped");

        // Restart with the same driver state (a front-end that paused the ring).
        client.restartQueue(0, base, false);
        client.writeReadVerify(q, 200, (byte) 0x21, true);
        requests += 2;
        base = client.stopQueue(0);
        assertEquals(expectedBase(format, requests), base);

        // Restart with a new driver view resuming at the base (QEMU's second start with Linux).
        q = client.startQueue(0, base, false);
        client.writeReadVerify(q, 208, (byte) 0x22, true);
        requests += 2;
        assertEquals(expectedBase(format, requests), client.stopQueue(0));
        assertEquals(0, status().refusals());
    }

    /**
     * The vring base after {@code requests} requests of 3 descriptors on a 64-entry ring: split, the available
     * index; packed, position and wrap counter (bit 15) of the available side in bits 0-15 and of the used side
     * in bits 16-31, equal when nothing is in flight (both counters start at 1, section 2.8.1).
     */
    private static int expectedBase(RingFormat format, int requests) {
        if (format == RingFormat.SPLIT) {
            return requests & 0xffff;
        }
        int descriptors = 3 * requests;
        int pos = descriptors % FrontendClient.QUEUE_SIZE;
        boolean wrap = (descriptors / FrontendClient.QUEUE_SIZE) % 2 == 0;
        int half = pos | (wrap ? 0x8000 : 0);
        return half | half << 16;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(RingFormat.class)
    void resetDeviceStopsTheRingsAndAFreshStartWorks(RingFormat format) throws Exception {
        client.negotiate(wanted(format, true));
        Queue q = client.startQueue(0, client.initialBase(), false);
        client.writeReadVerify(q, 0, (byte) 0x71, true);
        assertEquals(0, client.sendAck(VhostUser.RESET_DEVICE, new byte[0]));
        assertEquals(0, status().runningQueues());
        assertEquals(0, client.sendAck(VhostUser.SET_FEATURES, Message.u64(client.features())));
        q = client.startQueue(0, client.initialBase(), false);
        client.writeReadVerify(q, 16, (byte) 0x72, true);
        assertEquals(expectedBase(format, 2), client.stopQueue(0), "the ring started again from its beginning");
    }

    // Hostile input: an error, never a hang.

    @ParameterizedTest(name = "{0}")
    @EnumSource(RingFormat.class)
    void aDescriptorPastGuestMemoryBreaksTheQueueAndSignalsTheErrorDescriptor(RingFormat format) throws Exception {
        client.negotiate(wanted(format, true));
        try (AFPipe err = AFPipe.open()) {
            assertEquals(0, client.sendAck(VhostUser.SET_VRING_ERR, Message.u64(0), err.sink().getFileDescriptor()));
            Queue q = client.startQueue(0, client.initialBase(), false);
            QueueLayout l = q.driver.layout();
            long outside = 1L << 40; // far past the 4 MiB of guest memory
            // Descriptor 0 / ring position 0: addr, len, then (split) flags and next or (packed) id and flags.
            client.memory.writeU64(l.descTable(), outside);
            client.memory.writeU32(l.descTable() + 8, 16);
            if (format == RingFormat.SPLIT) {
                client.memory.writeU16(l.availRing() + 4, (short) 0);
                client.memory.writeU16Release(l.availRing() + 2, (short) 1);
            } else {
                client.memory.writeU16(l.descTable() + 12, (short) 0);
                client.memory.writeU16Release(l.descTable() + 14, (short) 0x80); // AVAIL with wrap counter 1
            }
            q.kick();
            Pipes.awaitErrorSignal(err);
            Await.await(() -> status().needsReset(), "the connection reports that the device needs a reset");
        }
        aNewSessionStillWorks(format);
    }

    @Test
    void aPackedBaseOutsideTheRingDoesNotStartTheQueueAndSignalsTheErrorDescriptor() throws Exception {
        client.negotiate(wanted(RingFormat.PACKED, true));
        try (AFPipe err = AFPipe.open()) {
            assertEquals(0, client.sendAck(VhostUser.SET_VRING_ERR, Message.u64(0), err.sink().getFileDescriptor()));
            client.startQueue(0, client.initialBase(), false);
            assertEquals(0x80008000, client.stopQueue(0));
            // Position 100 with wrap counter 1 in a ring of 64 (section 2.8.1: positions are below the size).
            client.restartQueue(0, 0x8000 | 100, false);
            Pipes.awaitErrorSignal(err);
            assertEquals(0, status().runningQueues());
        }
        aNewSessionStillWorks(RingFormat.PACKED);
    }

    @Test
    void aSplitBaseBeyondSixteenBitsIsRefused() throws Exception {
        client.negotiate(wanted(RingFormat.SPLIT, true));
        assertNotEquals(0, client.sendAck(VhostUser.SET_VRING_BASE, Message.vringState(0, 0x8000 | 6 << 16)));
        assertEquals(1, status().refusals());
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(RingFormat.class)
    void ringPartsOutsideTheMemoryTableAreRefused(RingFormat format) throws Exception {
        client.negotiate(wanted(format, true));
        assertEquals(0, client.sendAck(VhostUser.SET_VRING_NUM, Message.vringState(0, 64)));
        long end = FrontendClient.USER_BASE + client.memoryBytes;
        QueueLayout l = format.layout(64, 0);
        // The descriptor ring, then the driver area, then the device area reach past the only region by 4 bytes.
        long[][] cases = {
            {end - 16L * 64 + 4, FrontendClient.USER_BASE + l.usedRing(), FrontendClient.USER_BASE + l.availRing()},
            {FrontendClient.USER_BASE, FrontendClient.USER_BASE + l.usedRing(), end - 2},
            {FrontendClient.USER_BASE, end - 2, FrontendClient.USER_BASE + l.availRing()},
        };
        for (long[] c : cases) {
            assertNotEquals(0, client.sendAck(VhostUser.SET_VRING_ADDR, FrontendClient.vringAddr(0, c[0], c[1], c[2])),
                    String.format("desc 0x%x used 0x%x avail 0x%x", c[0], c[1], c[2]));
        }
        assertEquals(3, status().refusals());
        client.writeReadVerify(client.startQueue(0, client.initialBase(), false), 0, (byte) 0x73, true);
    }

    /** The broken session ends; the next front-end negotiates the same format and is served. */
    private void aNewSessionStillWorks(RingFormat format) throws Exception {
        client.close();
        assertTrue(disk.server.awaitNoFrontend(10, TimeUnit.SECONDS));
        client = disk.connect(dir.resolve("guest-ram-next"));
        client.negotiate(wanted(format, true));
        assertEquals(format, client.ringFormat());
        client.writeReadVerify(client.startQueue(0, client.initialBase(), false), 64, (byte) 0x6b, true);
    }
}
