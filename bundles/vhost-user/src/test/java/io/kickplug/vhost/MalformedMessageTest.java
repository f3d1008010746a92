package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.vhost.backend.MessageHandler;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.vhost.testsupport.Pipes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.newsclub.net.unix.AFPipe;

/**
 * A front-end that speaks the protocol wrongly on purpose, one case per test (issue 7 item 1): bad size,
 * unknown request, wrong descriptor count, overlapping regions, a ring outside every region and a queue
 * index out of range. Each refusal comes back as a non-zero REPLY_ACK (or an empty reply for requests that
 * always answer); afterwards the same connection still works where the stream is intact, and a fresh,
 * well-formed session always does, with I/O. A second disk exported beside it keeps serving throughout.
 */
class MalformedMessageTest {

    @TempDir
    Path dir;
    private ExportedDisk disk;
    private ExportedDisk other;
    private FrontendClient bad;

    @BeforeEach
    void export() throws Exception {
        disk = new ExportedDisk("victim", new MemoryBackend(1 << 20, false), 1, 1, dir.resolve("victim.sock"));
        other = new ExportedDisk("other", new MemoryBackend(1 << 20, false), 1, 1, dir.resolve("other.sock"));
        bad = disk.connect(dir.resolve("bad-ram"));
        // Negotiate REPLY_ACK so that refusals of requests without a reply can be observed.
        bad.getU64(VhostUser.GET_FEATURES);
        bad.send(VhostUser.SET_PROTOCOL_FEATURES, 0, Message.u64(bad.getU64(VhostUser.GET_PROTOCOL_FEATURES)));
    }

    @AfterEach
    void stop() throws Exception {
        bad.close();
        disk.close();
        other.close();
    }

    private static long wanted() {
        return VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_FLUSH;
    }

    /** Closes the malformed session and checks that a well-formed one serves I/O, and the other disk too. */
    private void wellFormedSessionStillWorks() throws Exception {
        bad.close();
        assertTrue(disk.server.awaitNoFrontend(10, TimeUnit.SECONDS), "the malformed session ended");
        try (FrontendClient good = disk.connect(dir.resolve("good-ram"))) {
            good.negotiate(wanted());
            good.writeReadVerify(good.startQueue(0, 0, false), 64, (byte) 0x6b, true);
        }
        try (FrontendClient neighbour = other.connect(dir.resolve("other-ram"))) {
            neighbour.negotiate(wanted());
            neighbour.writeReadVerify(neighbour.startQueue(0, 0, false), 8, (byte) 0x2c, true);
        }
    }

    private long refusals() {
        return disk.server.status().connection().refusals();
    }

    // Bad size.

    @Test
    void aPayloadOfTheWrongSizeIsRefusedAndTheStreamStaysInStep() throws Exception {
        assertNotEquals(0, bad.sendAck(VhostUser.SET_FEATURES, new byte[4]), "SET_FEATURES with 4 bytes");
        assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_NUM, new byte[12]), "SET_VRING_NUM with 12 bytes");
        assertNotEquals(0, bad.sendAck(VhostUser.SET_OWNER, new byte[8]), "SET_OWNER with a payload");
        // SET_MEM_TABLE announcing 2 regions but carrying one.
        byte[] table = Message.payload(8 + 32).putInt(2).putInt(0).putLong(0).putLong(4096).putLong(0x1000)
                .putLong(0).array();
        assertNotEquals(0, bad.sendAck(VhostUser.SET_MEM_TABLE, table, bad.memoryFd()));
        // GET_CONFIG of more than the 256-byte space: an empty reply, so that QEMU fails instead of waiting.
        Message r = bad.call(VhostUser.GET_CONFIG, Message.payload(12).putInt(250).putInt(16).putInt(0).array());
        assertEquals(0, r.size());
        assertEquals(5, refusals());
        assertEquals(disk.device.offeredFeatures() | VhostUser.F_PROTOCOL_FEATURES | VhostUser.F_LOG_ALL,
                bad.getU64(VhostUser.GET_FEATURES), "the connection still answers");
        wellFormedSessionStillWorks();
    }

    /** A GET_INFLIGHT_FD payload of {@code bytes} bytes (24 is the protocol's) for one queue of 256. */
    private static byte[] inflightRequest(int bytes) {
        return Message.payload(bytes).putLong(0).putLong(0).putShort((short) 1).putShort((short) 256).array();
    }

    /**
     * vhost-user's fixed-size requests (docs/interop/vhost-user.rst, "Front-end message types") carrying a payload
     * longer than theirs: each is refused, not read from its first bytes, and the stream stays in step. (A short
     * payload fails the read anyway; a long one is what the size check alone catches.)
     */
    @Test
    void aPayloadLongerThanTheRequestsIsRefusedNotReadFromItsStart() throws Exception {
        long features = disk.device.offeredFeatures() & wanted();
        assertNotEquals(0, bad.sendAck(VhostUser.SET_FEATURES, Message.payload(16).putLong(features).array()),
                "SET_FEATURES with 16 bytes");
        assertNotEquals(0, bad.sendAck(VhostUser.SET_PROTOCOL_FEATURES,
                Message.payload(16).putLong(VhostUser.PROTOCOL_F_REPLY_ACK).array()), "SET_PROTOCOL_FEATURES, 16 bytes");
        assertNotEquals(0, bad.sendAck(VhostUser.RESET_OWNER, new byte[8]), "RESET_OWNER with a payload");
        assertNotEquals(0, bad.sendAck(VhostUser.RESET_DEVICE, new byte[8]), "RESET_DEVICE with a payload");
        assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_BASE, Message.payload(16).putInt(0).putInt(0).array()),
                "SET_VRING_BASE with 16 bytes");
        assertEquals(0, bad.call(VhostUser.GET_VRING_BASE, Message.payload(16).putInt(0).putInt(0).array()).size(),
                "GET_VRING_BASE with 16 bytes: an empty reply");
        assertEquals(0, bad.call(VhostUser.GET_INFLIGHT_FD, inflightRequest(32)).size(),
                "GET_INFLIGHT_FD with 32 bytes: an empty reply, no area");
        assertEquals(0, bad.call(VhostUser.GET_FEATURES, new byte[8]).size(), "GET_FEATURES with a payload");
        assertEquals(8, refusals());
        assertEquals(1, bad.getU64(VhostUser.GET_QUEUE_NUM),
                "the protocol features negotiated before the refused SET_PROTOCOL_FEATURES still hold (MQ among them)");
        wellFormedSessionStillWorks();
    }

    /**
     * A request whose protocol feature was not negotiated (docs/interop/vhost-user.rst: GET_QUEUE_NUM needs
     * PROTOCOL_F_MQ, GET/SET_CONFIG CONFIG, GET_MAX_MEM_SLOTS/ADD/REM_MEM_REG CONFIGURE_MEM_SLOTS, RESET_DEVICE
     * RESET_DEVICE, GET/SET_INFLIGHT_FD INFLIGHT_SHMFD, SET_BACKEND_REQ_FD BACKEND_REQ) is refused; once the
     * feature is negotiated the same request is answered.
     */
    @Test
    void aRequestWhoseProtocolFeatureWasNotNegotiatedIsRefused() throws Exception {
        assertEquals(0, bad.sendAck(VhostUser.SET_PROTOCOL_FEATURES, Message.u64(VhostUser.PROTOCOL_F_REPLY_ACK)));
        assertEquals(0, bad.call(VhostUser.GET_QUEUE_NUM, new byte[0]).size(), "GET_QUEUE_NUM without MQ");
        assertEquals(0, bad.call(VhostUser.GET_CONFIG, Message.payload(12 + 8).putInt(0).putInt(8).putInt(0).array())
                .size(), "GET_CONFIG without CONFIG");
        assertEquals(0, bad.call(VhostUser.GET_MAX_MEM_SLOTS, new byte[0]).size(),
                "GET_MAX_MEM_SLOTS without CONFIGURE_MEM_SLOTS");
        assertNotEquals(0, bad.sendAck(VhostUser.RESET_DEVICE, new byte[0]), "RESET_DEVICE without RESET_DEVICE");
        assertEquals(0, bad.call(VhostUser.GET_INFLIGHT_FD, inflightRequest(24)).size(),
                "GET_INFLIGHT_FD without INFLIGHT_SHMFD");
        assertEquals(5, refusals());
        assertEquals(0, bad.sendAck(VhostUser.SET_PROTOCOL_FEATURES,
                Message.u64(VhostUser.PROTOCOL_F_REPLY_ACK | VhostUser.PROTOCOL_F_MQ
                        | VhostUser.PROTOCOL_F_CONFIGURE_MEM_SLOTS)));
        assertEquals(1, bad.getU64(VhostUser.GET_QUEUE_NUM), "answered once MQ is negotiated");
        assertEquals(MessageHandler.MAX_MEM_SLOTS, bad.getU64(VhostUser.GET_MAX_MEM_SLOTS));
        assertEquals(5, refusals());
        wellFormedSessionStillWorks();
    }

    @Test
    void aHeaderAnnouncingAnImpossibleSizeEndsTheConnectionOnly() throws Exception {
        // 1 MiB is far beyond any vhost-user message: the stream cannot be trusted, the backend hangs up.
        ByteBuffer h = Message.payload(12).putInt(VhostUser.SET_FEATURES).putInt(VhostUser.VERSION).putInt(1 << 20);
        bad.socket.getOutputStream().write(h.array());
        assertNull(bad.channel.read(), "the backend closed the connection");
        wellFormedSessionStillWorks();
    }

    @Test
    void aWrongProtocolVersionEndsTheConnectionOnly() throws Exception {
        bad.channel.send(VhostUser.GET_FEATURES, 0x2, new byte[0], null);
        assertNull(bad.channel.read(), "the backend closed the connection");
        wellFormedSessionStillWorks();
    }

    // Unknown request.

    @Test
    void anUnknownRequestIsRefused() throws Exception {
        assertNotEquals(0, bad.sendAck(77, new byte[8]));
        // GET_INFLIGHT_FD for 0 queues (an empty reply: it always answers; InflightTrackingTest has the rest)
        // and the log base before LOG_SHMFD was negotiated (it always answers too; DirtyLogTest has the rest).
        bad.send(VhostUser.GET_INFLIGHT_FD, VhostUser.FLAG_NEED_REPLY, new byte[24]);
        assertEquals(0, bad.receive().size(), "GET_INFLIGHT_FD for 0 queues");
        bad.send(VhostUser.SET_LOG_BASE, 0, new byte[16]);
        assertEquals(0, bad.receive().size(), "SET_LOG_BASE without LOG_SHMFD");
        assertEquals(3, refusals());
        wellFormedSessionStillWorks();
    }

    // Wrong descriptor count.

    @Test
    void aKickWithoutDescriptorIsRefused() throws Exception {
        bad.negotiate(wanted());
        assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_KICK, Message.u64(0)), "no fd and no NOFD flag");
        wellFormedSessionStillWorks();
    }

    @Test
    void extraDescriptorsAreRefusedAndClosed() throws Exception {
        bad.negotiate(wanted());
        try (AFPipe pipe = AFPipe.open()) {
            // NOFD flag with a descriptor anyway: refused, and the backend must not keep its copy.
            assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_CALL, Message.u64(VhostUser.VRING_NOFD_MASK),
                    pipe.sink().getFileDescriptor()));
            pipe.sink().close();
            assertEquals(-1, Pipes.read(pipe, 1), "the write end was closed by the backend too");
        }
        bad.send(VhostUser.GET_FEATURES, 0, new byte[0], bad.memoryFd());
        assertEquals(0, bad.receive().size(), "GET_FEATURES with a descriptor: refused with an empty reply");
        wellFormedSessionStillWorks();
    }

    @Test
    void aMemoryTableWithTooFewDescriptorsIsRefused() throws Exception {
        byte[] table = Message.payload(8 + 32).putInt(1).putInt(0).putLong(0).putLong(FrontendClient.MEMORY_BYTES)
                .putLong(FrontendClient.USER_BASE).putLong(0).array();
        assertNotEquals(0, bad.sendAck(VhostUser.SET_MEM_TABLE, table));
        assertNotEquals(0, bad.sendAck(VhostUser.ADD_MEM_REG, FrontendClient.region(0, 4096, 0x1000, 0)));
        wellFormedSessionStillWorks();
    }

    // Region overlap.

    @Test
    void overlappingRegionsAreRefused() throws Exception {
        bad.negotiate(wanted()); // maps [0, 4 MiB) at USER_BASE
        long half = FrontendClient.MEMORY_BYTES / 2;
        // Same guest addresses, other user addresses.
        assertNotEquals(0, bad.sendAck(VhostUser.ADD_MEM_REG, FrontendClient.region(half, half, 0x10_0000_0000L, 0),
                bad.memoryFd()));
        // Other guest addresses, overlapping user addresses.
        assertNotEquals(0, bad.sendAck(VhostUser.ADD_MEM_REG, FrontendClient.region(1L << 32, half,
                FrontendClient.USER_BASE + half, 0), bad.memoryFd()));
        // Within one SET_MEM_TABLE.
        byte[] table = Message.payload(8 + 64).putInt(2).putInt(0)
                .putLong(0).putLong(half).putLong(0x1000_0000L).putLong(0)
                .putLong(half - 4096).putLong(half).putLong(0x2000_0000L).putLong(0).array();
        assertNotEquals(0, bad.sendAck(VhostUser.SET_MEM_TABLE, table, bad.memoryFd(), bad.memoryFd()));
        // A region beyond the end of its file cannot be mapped.
        assertNotEquals(0, bad.sendAck(VhostUser.ADD_MEM_REG, FrontendClient.region(1L << 33,
                FrontendClient.MEMORY_BYTES, 0x30_0000_0000L, 4096), bad.memoryFd()));
        assertEquals(1, disk.server.status().connection().memoryRegions(), "only the first region is mapped");
        wellFormedSessionStillWorks();
    }

    @Test
    void aRegionThatWrapsAroundIsRefused() throws Exception {
        bad.negotiate(wanted());
        assertNotEquals(0, bad.sendAck(VhostUser.ADD_MEM_REG, FrontendClient.region(-4096, 8192, 0x40_0000_0000L, 0),
                bad.memoryFd()));
        assertNotEquals(0, bad.sendAck(VhostUser.ADD_MEM_REG, FrontendClient.region(1L << 34, 0, 0x50_0000_0000L, 0),
                bad.memoryFd()));
        wellFormedSessionStillWorks();
    }

    // Ring outside every region.

    @Test
    void ringAddressesOutsideEveryRegionAreRefused() throws Exception {
        bad.negotiate(wanted());
        assertEquals(0, bad.sendAck(VhostUser.SET_VRING_NUM, Message.vringState(0, 64)));
        long end = FrontendClient.USER_BASE + FrontendClient.MEMORY_BYTES;
        // Descriptor table wholly outside.
        assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_ADDR, FrontendClient.vringAddr(0, end + 4096,
                FrontendClient.USER_BASE + 8192, FrontendClient.USER_BASE + 4096)));
        // Used ring straddling the end of the region.
        assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_ADDR, FrontendClient.vringAddr(0, FrontendClient.USER_BASE,
                end - 16, FrontendClient.USER_BASE + 4096)));
        // Available ring below the region.
        assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_ADDR, FrontendClient.vringAddr(0, FrontendClient.USER_BASE,
                FrontendClient.USER_BASE + 8192, FrontendClient.USER_BASE - 64)));
        assertEquals(3, refusals());
        wellFormedSessionStillWorks();
    }

    // Queue index out of range.

    @Test
    void aQueueIndexOutOfRangeIsRefused() throws Exception {
        bad.negotiate(wanted());
        assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_NUM, Message.vringState(1, 64)), "the disk has 1 queue");
        assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_BASE, Message.vringState(-1, 0)));
        assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_ENABLE, Message.vringState(200, 1)));
        try (AFPipe pipe = AFPipe.open()) {
            assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_KICK, Message.u64(5), pipe.source().getFileDescriptor()));
        }
        Message r = bad.call(VhostUser.GET_VRING_BASE, Message.vringState(9, 0));
        assertEquals(0, r.size(), "GET_VRING_BASE of a missing queue gets an empty reply");
        assertEquals(5, refusals());
        wellFormedSessionStillWorks();
    }

    @Test
    void aQueueSizeThatIsNotAPowerOfTwoIsRefused() throws Exception {
        bad.negotiate(wanted());
        assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_NUM, Message.vringState(0, 100)));
        assertNotEquals(0, bad.sendAck(VhostUser.SET_VRING_NUM, Message.vringState(0, 65536)),
                "above the maximum 32768 (section 2.7)");
        wellFormedSessionStillWorks();
    }

    @Test
    void featuresThatWereNotOfferedAreRefused() throws Exception {
        assertNotEquals(0, bad.sendAck(VhostUser.SET_FEATURES, Message.u64(VirtioFeatures.RING_PACKED
                | VirtioFeatures.VERSION_1)));
        assertNotEquals(0, bad.sendAck(VhostUser.SET_PROTOCOL_FEATURES, Message.u64(
                1L << 2))); // VHOST_USER_PROTOCOL_F_RARP, not offered
        wellFormedSessionStillWorks();
    }

    @Test
    void aSecondFrontEndIsDisconnectedWhileTheFirstKeepsWorking() throws Exception {
        bad.negotiate(wanted());
        FrontendClient.Queue q = bad.startQueue(0, 0, false);
        try (FrontendClient intruder = disk.connect(dir.resolve("intruder-ram"))) {
            assertThrows(IOException.class, () -> intruder.getU64(VhostUser.GET_FEATURES));
        }
        bad.writeReadVerify(q, 16, (byte) 0x3c, true);
        assertEquals(1, disk.server.status().rejected());
    }

    @Test
    void aGuestFaultStopsTheQueueAndSignalsTheErrorDescriptor() throws Exception {
        bad.negotiate(wanted());
        try (AFPipe err = AFPipe.open()) {
            assertEquals(0, bad.sendAck(VhostUser.SET_VRING_ERR, Message.u64(0), err.sink().getFileDescriptor()));
            FrontendClient.Queue q = bad.startQueue(0, 0, false);
            // Section 2.7.6: an available ring entry that is not a descriptor index is a driver error.
            long avail = q.driver.layout().availRing();
            bad.memory.writeU16(avail + 4, (short) 1000);
            bad.memory.writeU16Release(avail + 2, (short) 1);
            q.kick();
            Pipes.awaitErrorSignal(err);
            assertTrue(disk.server.status().connection().needsReset());
        }
        wellFormedSessionStillWorks();
    }
}
