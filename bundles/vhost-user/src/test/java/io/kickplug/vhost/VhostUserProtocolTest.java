package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.testkit.Await;
import io.kickplug.vhost.backend.MessageHandler;
import io.kickplug.vhost.backend.SessionStatus;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The backend against a front-end played by the test: it negotiates like QEMU 7.2 (ADD_MEM_REG, rings started
 * by KICK and enabled by SET_VRING_ENABLE), lays out split rings in shared memory with the driver view, and
 * runs virtio-blk requests (VIRTIO 1.2 section 5.2.6) that the real {@code VirtioBlkDevice} serves.
 */
class VhostUserProtocolTest extends ExportedDiskFixture {

    @Override
    ExportedDisk export() throws Exception {
        return ExportedDisk.memory("hp", 1 << 20, 2, 2, dir);
    }

    private long wanted() {
        return VirtioFeatures.RING_EVENT_IDX | VirtioFeatures.RING_INDIRECT_DESC | VirtioBlk.F_MQ | VirtioBlk.F_FLUSH
                | VirtioBlk.F_BLK_SIZE | VirtioBlk.F_SEG_MAX;
    }

    @Test
    void writeThenReadReachesTheBackendAndRaisesTheCallNotification() throws Exception {
        // Without EVENT_IDX and with interrupts enabled the device MUST notify after each batch (2.7.7.2).
        client.negotiate(wanted() & ~VirtioFeatures.RING_EVENT_IDX);
        Queue q = client.startQueue(0, 0, false);

        client.writeReadVerify(q, 8, (byte) 0x5a, true);

        ByteBuffer stored = ByteBuffer.allocate(4096);
        disk.backend.read(8 * 512L, new ByteBuffer[] {stored});
        byte[] expected = new byte[4096];
        Arrays.fill(expected, (byte) 0x5a);
        assertArrayEquals(expected, stored.array(), "the backend holds what the driver wrote");
        // The driver may see a used entry before the I/O thread writes the call descriptor: wait for both.
        assertTrue(q.awaitReceived(2, 10_000), "each completion wrote the call descriptor: " + q.received());
        // The second request may legitimately need no kick: the device re-checks the available ring after
        // re-enabling notifications (section 2.7.10), so only the first kick is certain. The I/O thread may serve
        // the first request before it reads that kick's descriptor (its handler runs on activation too), so the
        // count is waited for, not read once.
        Await.await(() -> disk.server.status().connection().kicks() >= 1, "the first request arrived by a kick");
        SessionStatus s = disk.server.status().connection();
        assertEquals(0, s.refusals());
    }

    @Test
    void offersTheDeviceFeaturesWithProtocolFeaturesAndAnswersQueueNum() throws Exception {
        long features = client.getU64(VhostUser.GET_FEATURES);
        assertEquals(disk.device.offeredFeatures() | VhostUser.F_PROTOCOL_FEATURES | VhostUser.F_LOG_ALL, features,
                "the device's, VHOST_USER_F_PROTOCOL_FEATURES and VHOST_F_LOG_ALL (live migration)");
        long protocol = client.getU64(VhostUser.GET_PROTOCOL_FEATURES);
        assertEquals(MessageHandler.PROTOCOL_FEATURES, protocol);
        assertEquals(VhostUser.PROTOCOL_F_INFLIGHT_SHMFD, protocol & VhostUser.PROTOCOL_F_INFLIGHT_SHMFD,
                "inflight tracking is offered");
        client.send(VhostUser.SET_PROTOCOL_FEATURES, 0, Message.u64(protocol));
        assertEquals(2, client.getU64(VhostUser.GET_QUEUE_NUM));
        assertEquals(MessageHandler.MAX_MEM_SLOTS, client.getU64(VhostUser.GET_MAX_MEM_SLOTS));
    }

    @Test
    void getConfigReturnsTheBlockConfigurationSpace() throws Exception {
        client.negotiate(wanted());
        int size = 60; // QEMU 7.2 asks for sizeof(struct virtio_blk_config) up to write_zeroes_may_unmap
        Message r = client.call(VhostUser.GET_CONFIG, Message.payload(12 + size).putInt(0).putInt(size).putInt(0)
                .array());
        assertEquals(12 + size, r.size(), "the reply has the requested size");
        ByteBuffer b = r.body();
        b.position(12);
        // Section 5.2.4: capacity in 512-byte sectors; num_queues at offset 34.
        assertEquals((1 << 20) / 512, b.getLong(12 + VirtioBlk.CFG_CAPACITY));
        assertEquals(2, b.getShort(12 + VirtioBlk.CFG_NUM_QUEUES));
    }

    @Test
    void stopWithGetVringBaseThenRestartLikeQemuDoesBeforeLinux() throws Exception {
        client.negotiate(wanted());
        Queue q = client.startQueue(0, 0, false);
        client.writeReadVerify(q, 0, (byte) 1, true);

        int base = client.stopQueue(0);
        assertEquals(2, base, "GET_VRING_BASE returns the next available index: two requests were served");
        assertEquals(0, disk.server.status().connection().runningQueues(), "the ring stopped");

        // The second start (Linux after SeaBIOS) continues from the returned index.
        q = client.startQueue(0, base, false);
        client.writeReadVerify(q, 16, (byte) 2, true);
        assertEquals(4, client.stopQueue(0));
    }

    @Test
    void twoQueuesServeRequestsIndependently() throws Exception {
        client.negotiate(wanted());
        Queue q0 = client.startQueue(0, 0, false);
        Queue q1 = client.startQueue(1, 0, false);
        assertEquals(2, disk.server.status().connection().runningQueues());
        client.writeReadVerify(q1, 100, (byte) 0x11, true);
        client.writeReadVerify(q0, 200, (byte) 0x22, true);
    }

    @Test
    void aQueueWithoutCallDescriptorIsNeverNotified() throws Exception {
        // A Linux poll queue: SET_VRING_CALL with the NOFD flag (0x100) and no descriptor. With EVENT_IDX the
        // driver leaves used_event at 0, so a backend that decides by used_event alone would notify (and
        // qemu-storage-daemon crashes writing fd -1); the backend must skip the notification.
        client.negotiate(wanted());
        Queue q0 = client.startQueue(0, 0, false);
        Queue poll = client.startQueue(1, 0, true);
        client.writeReadVerify(poll, 300, (byte) 0x33, false);
        SessionStatus s = disk.server.status().connection();
        assertEquals("1", s.pollQueues());
        assertEquals(0, s.interrupts(), "no notification for the poll queue");
        client.writeReadVerify(q0, 400, (byte) 0x44, true);
        // With EVENT_IDX the driver's used_event decides how many; at least the first completion notifies.
        assertTrue(q0.awaitReceived(1, 10_000), "the interrupt queue still gets them");
        assertEquals(0, poll.interruptsPending());
    }

    @Test
    void resetDeviceStopsEverythingAndANewStartWorks() throws Exception {
        client.negotiate(wanted());
        Queue q = client.startQueue(0, 0, false);
        client.writeReadVerify(q, 0, (byte) 7, true);
        assertEquals(0, client.sendAck(VhostUser.RESET_DEVICE, new byte[0]));
        assertEquals(0, disk.server.status().connection().runningQueues());
        assertEquals(0, client.sendAck(VhostUser.SET_FEATURES, Message.u64(
                disk.device.offeredFeatures() | VhostUser.F_PROTOCOL_FEATURES)));
        q = client.startQueue(0, 0, false);
        client.writeReadVerify(q, 24, (byte) 8, true);
    }

    @Test
    void theNextFrontEndIsServedAfterADisconnect() throws Exception {
        client.negotiate(wanted());
        client.writeReadVerify(client.startQueue(0, 0, false), 0, (byte) 9, true);
        client.close();
        assertTrue(disk.server.awaitNoFrontend(10, TimeUnit.SECONDS));
        client = disk.connect(dir.resolve("guest-ram-2"));
        client.negotiate(wanted());
        Queue q = client.startQueue(0, 0, false);
        client.writeReadVerify(q, 32, (byte) 10, true);
        assertEquals(2, disk.server.status().sessions());
    }
}
