package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.MessageChannel;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.newsclub.net.unix.AFPipe;
import org.newsclub.net.unix.AFUNIXSocket;
import org.newsclub.net.unix.AFUNIXSocketChannel;
import org.newsclub.net.unix.AFUNIXSocketPair;

/**
 * The back-end request channel (vhost-user.rst "Back-end communication": protocol feature BACKEND_REQ,
 * SET_BACKEND_REQ_FD, BACKEND_CONFIG_CHANGE_MSG) against a front-end played by the test: a resize of the
 * exported disk reaches the front-end as a configuration-change message, the front-end reads the new capacity
 * with GET_CONFIG (as QEMU's vhost_user_blk_handle_config_change does before it acknowledges), and a front-end
 * that closes the channel or never answers does not stop the back-end.
 */
class BackendRequestChannelTest extends ExportedDiskFixture {

    private static final long MIB = 1 << 20;

    private AFUNIXSocketPair<AFUNIXSocketChannel> pair;

    @Override
    ExportedDisk export() throws Exception {
        return ExportedDisk.memory("br", MIB, 1, 1, dir);
    }

    @BeforeEach
    void openPair() throws Exception {
        pair = AFUNIXSocketPair.open();
    }

    @AfterEach
    void closePair() throws Exception {
        pair.close();
    }

    /** The front-end's end of the channel, read with the project's message reader. */
    private MessageChannel frontEnd() throws Exception {
        AFUNIXSocket s = (AFUNIXSocket) pair.getSocket1().socket();
        s.setSoTimeout(10_000);
        return new MessageChannel(s);
    }

    /**
     * SET_BACKEND_REQ_FD with the other end of the pair. The test keeps its copy open until the end: junixsocket's
     * close shuts the socket down for every copy, unlike QEMU's plain close(2) of its sv[1].
     */
    private void passBackendEnd() throws Exception {
        assertEquals(0, client.sendAck(VhostUser.SET_BACKEND_REQ_FD, new byte[0],
                pair.getSocket2().getFileDescriptor()));
    }

    private Queue start() throws Exception {
        return client.startQueue(0, 0, false);
    }

    /** Negotiates EVENT_IDX and every offered protocol feature, passes the backend channel, starts queue 0. */
    private Queue startWithBackendChannel() throws Exception {
        client.negotiate(VirtioFeatures.RING_EVENT_IDX);
        passBackendEnd();
        return start();
    }

    /** Grows the disk the way DiskRegistry.resize does for an export: backend first, then the device's signal. */
    private void resize(long bytes) throws Exception {
        disk.backend.resize(bytes);
        // Never waits on the front-end: the message goes out on the channel's own thread.
        CompletableFuture.runAsync(disk.device::capacityChanged).get(10, TimeUnit.SECONDS);
    }

    /** virtio-blk capacity (5.2.4, offset 0) read by GET_CONFIG on the main channel. */
    private long capacity() throws Exception {
        byte[] req = Message.payload(VhostUser.CONFIG_HEADER_SIZE + 8).putInt(0).putInt(8).putInt(0).array();
        Message r = client.call(VhostUser.GET_CONFIG, req);
        return r.body().getLong(VhostUser.CONFIG_HEADER_SIZE);
    }

    @Test
    void theBackendRequestFeatureIsOffered() throws Exception {
        assertEquals(VhostUser.PROTOCOL_F_BACKEND_REQ,
                client.getU64(VhostUser.GET_PROTOCOL_FEATURES) & VhostUser.PROTOCOL_F_BACKEND_REQ);
    }

    @Test
    void resizeSendsConfigChangeWithNeedReplyAndTheFrontEndReadsTheNewCapacityBeforeAcking() throws Exception {
        Queue q = startWithBackendChannel();
        MessageChannel fe = frontEnd();
        assertEquals(MIB / 512, capacity());

        resize(2 * MIB);
        Message m = fe.read();
        assertNotNull(m, "the back-end closed the channel");
        assertEquals(VhostUser.BACKEND_CONFIG_CHANGE_MSG, m.request());
        assertEquals(0, m.size(), "CONFIG_CHANGE_MSG has no payload");
        assertEquals(VhostUser.VERSION, m.flags() & VhostUser.VERSION_MASK);
        assertTrue(m.needReply(), "REPLY_ACK was negotiated: the back-end asks for the status");
        // QEMU reads the configuration on the main channel before it answers on this one: no deadlock.
        assertEquals(2 * MIB / 512, capacity());
        client.writeReadVerify(q, 2 * MIB / 512 - 8, (byte) 0x6b, true); // the new sectors serve I/O
        fe.send(VhostUser.BACKEND_CONFIG_CHANGE_MSG, VhostUser.VERSION | VhostUser.FLAG_REPLY, Message.u64(0), null);

        // Acknowledged: the next change is sent as well.
        resize(4 * MIB);
        Message again = fe.read();
        assertNotNull(again);
        assertEquals(VhostUser.BACKEND_CONFIG_CHANGE_MSG, again.request());
        assertEquals(4 * MIB / 512, capacity());
        fe.send(VhostUser.BACKEND_CONFIG_CHANGE_MSG, VhostUser.VERSION | VhostUser.FLAG_REPLY, Message.u64(0), null);
        assertEquals(0, disk.server.status().connection().refusals());
    }

    @Test
    void withoutReplyAckNoAnswerIsRequested() throws Exception {
        client.negotiate(VirtioFeatures.RING_EVENT_IDX, ~VhostUser.PROTOCOL_F_REPLY_ACK);
        passBackendEnd();
        start();
        MessageChannel fe = frontEnd();
        // Without REPLY_ACK nothing answers the setup: a GET_CONFIG round trip orders it before the resize.
        assertEquals(MIB / 512, capacity());
        resize(2 * MIB);
        Message m = fe.read();
        assertEquals(VhostUser.BACKEND_CONFIG_CHANGE_MSG, m.request());
        assertTrue(!m.needReply(), "NEED_REPLY only with REPLY_ACK negotiated");
        // Nobody answers, yet the next change goes out.
        resize(3 * MIB);
        Message next = fe.read();
        assertEquals(VhostUser.BACKEND_CONFIG_CHANGE_MSG, next.request());
        assertEquals(3 * MIB / 512, capacity());
    }

    @Test
    void aFrontEndThatClosesTheChannelDoesNotStopTheBackend() throws Exception {
        Queue q = startWithBackendChannel();
        pair.getSocket1().close();

        resize(2 * MIB);
        resize(3 * MIB);
        assertEquals(3 * MIB / 512, capacity(), "the main channel still answers");
        client.writeReadVerify(q, 16, (byte) 0x21, true);
        assertEquals(0, disk.server.status().connection().refusals());
    }

    @Test
    void aFrontEndThatNeverAnswersDoesNotStopTheBackendNorItsDisconnect() throws Exception {
        Queue q = startWithBackendChannel();
        MessageChannel fe = frontEnd();
        resize(2 * MIB);
        assertEquals(VhostUser.BACKEND_CONFIG_CHANGE_MSG, fe.read().request());
        // No answer. Later changes coalesce behind the unanswered one; the caller never waits.
        resize(3 * MIB);
        resize(4 * MIB);
        assertEquals(4 * MIB / 512, capacity());
        client.writeReadVerify(q, 24, (byte) 0x37, true);

        client.disconnect();
        assertTrue(disk.server.awaitNoFrontend(30, TimeUnit.SECONDS),
                "the session ends although the back-end channel waits for an answer");
    }

    @Test
    void setBackendReqFdIsRefusedWithoutTheFeatureOrWithoutADescriptor() throws Exception {
        client.negotiate(VirtioFeatures.RING_EVENT_IDX, ~VhostUser.PROTOCOL_F_BACKEND_REQ);
        assertNotEquals(0, client.sendAck(VhostUser.SET_BACKEND_REQ_FD, new byte[0],
                pair.getSocket2().getFileDescriptor()), "BACKEND_REQ was not negotiated");
        assertEquals(1, disk.server.status().connection().refusals());
    }

    @Test
    void setBackendReqFdWithoutADescriptorOrWithAPipeIsRefused() throws Exception {
        client.negotiate(VirtioFeatures.RING_EVENT_IDX);
        assertNotEquals(0, client.sendAck(VhostUser.SET_BACKEND_REQ_FD, new byte[0]), "no descriptor");
        try (AFPipe pipe = AFPipe.open()) {
            assertNotEquals(0, client.sendAck(VhostUser.SET_BACKEND_REQ_FD, new byte[0],
                    pipe.sink().getFileDescriptor()), "a pipe is not a socket");
        }
        assertEquals(2, disk.server.status().connection().refusals());
        // Still serving, and a resize without a channel only logs.
        Queue q = start();
        resize(2 * MIB);
        client.writeReadVerify(q, 0, (byte) 0x11, true);
    }
}
