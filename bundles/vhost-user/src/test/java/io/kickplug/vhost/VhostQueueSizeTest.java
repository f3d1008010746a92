package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.blk.device.BlkDeviceSpec;
import io.kickplug.blk.device.VirtioBlkDevice;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.server.VhostUserServer;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.iothread.EventLoopThread;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The front-end chooses the ring size of a vhost-user export (SET_VRING_NUM): any power of two up to 32768
 * (VIRTIO 1.2 section 2.7), independent of the disk's in-process queue size (here 16). QEMU's
 * vhost-user-blk allows {@code queue-size} up to 1024; a refusal of 1024 was issue 13's functional failure.
 */
class VhostQueueSizeTest {

    /** The disk's in-process queue size: smaller than every ring the front-end asks for below. */
    private static final int DISK_QUEUE_SIZE = 16;
    /** Big rings live above the data buffers of FrontendClient (1 MiB + 64 KiB per slot). */
    private static final long BIG_RING_BASE = 2L << 20;

    @TempDir
    Path dir;
    private IoThread thread;
    private VirtioBlkDevice device;
    private VhostUserServer server;
    private FrontendClient client;

    @BeforeEach
    void export() throws Exception {
        thread = new EventLoopThread("test-qsize-io");
        device = new VirtioBlkDevice(BlkDeviceSpec.of("qsize", new MemoryBackend(1 << 20, false), false, 1,
                DISK_QUEUE_SIZE, "qsize".getBytes(StandardCharsets.US_ASCII), List.of(thread)));
        server = new VhostUserServer("qsize", dir.resolve("vhost.sock"), device, new VirtqueueFactoryComponent(),
                new GuestMemoryFactoryComponent());
        client = new FrontendClient(server.socketPath(), dir.resolve("guest-ram"));
        client.negotiate(VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_FLUSH);
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        server.close();
        device.close();
        thread.close();
    }

    @ParameterizedTest(name = "ring of {0}")
    @ValueSource(ints = {64, 1024, 32768})
    void aRingOfAnyPowerOfTwoUpTo32768ServesRequests(int size) throws Exception {
        Queue q = client.startQueue(0, 0, false, size, BIG_RING_BASE);
        assertEquals(1, server.status().connection().runningQueues());
        // The client's layout of the queue is the ring it started, where its used_event and avail_event are
        // (VIRTIO 1.2 sections 2.7.6 and 2.7.8), not the default 64 entries at the queue's default place.
        assertEquals(q.driver.layout(), client.layout(0));
        client.writeReadVerify(q, 8, (byte) 0x5a, true);
        client.writeReadVerify(q, 16, (byte) 0xa5, false);
        assertEquals(0, server.status().connection().refusals());
    }

    @ParameterizedTest(name = "SET_VRING_NUM {0}")
    @ValueSource(ints = {1, 2, 256, 512, 2048, 16384})
    void everyPowerOfTwoUpTo32768IsAccepted(int size) throws Exception {
        assertEquals(0, client.sendAck(VhostUser.SET_VRING_NUM, Message.vringState(0, size)));
    }

    // Section 2.7: "Queue Size value is always a power of 2. The maximum Queue Size value is 32768."
    @ParameterizedTest(name = "SET_VRING_NUM {0}")
    @ValueSource(ints = {0, 3, 1000, 65536, -1})
    void sizesThatAreNotAPowerOfTwoUpTo32768AreRefused(int size) throws Exception {
        assertNotEquals(0, client.sendAck(VhostUser.SET_VRING_NUM, Message.vringState(0, size)));
        assertTrue(server.status().connection().lastRefusal().contains("is not a power of two in 1..32768"),
                server.status().connection().lastRefusal());
    }

    @Test
    void theInflightAreaIsCreatedForA1024EntryRing() throws Exception {
        Message r = client.call(VhostUser.GET_INFLIGHT_FD, Message.payload(24).putLong(0).putLong(0)
                .putShort((short) 1).putShort((short) 1024).array());
        assertEquals(24, r.size(), "a 24-byte reply, not the empty one of a refusal");
        assertEquals(1, r.fds().length);
        assertEquals(1024, r.body().getShort(18) & 0xffff);
        io.kickplug.vhost.protocol.Fds.close(r.fds()[0]);
    }
}
