package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.blk.testkit.ForwardingBackend;
import io.kickplug.vhost.backend.InflightRegion;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import io.kickplug.vhost.protocol.Fds;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.vhost.testsupport.HeldWrites;
import io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Inflight I/O tracking on a packed ring (vhost-user.rst "Inflight I/O tracking", packed virtqueue) end to end:
 * the front-end negotiates VIRTIO_F_RING_PACKED, gets the packed-layout area with GET_INFLIGHT_FD and hands it over;
 * the back-end takes writes that never complete (its disk hangs) and loses its front-end; a second back-end on the
 * same disk gets the same area at the front-end's reconnect and resubmits those writes, which then reach the disk
 * and complete exactly once, and the ring continues.
 */
class PackedInflightReconnectTest {

    private static final int INFLIGHT_PAYLOAD = 24;
    private static final long WANTED = VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_FLUSH | VirtioFeatures.RING_PACKED;

    @TempDir
    Path dir;
    private final MemoryBackend storage = new MemoryBackend(1 << 20, false);
    /** Writes hang on the I/O thread itself once held (a back-end that is gone); close leaves the disk open. */
    private final HeldWrites hanging = new HeldWrites(storage, false, false);
    private ExportedDisk first;
    private ExportedDisk second;
    private FrontendClient client;
    private RandomAccessFile areaFile;

    @AfterEach
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        hanging.release.countDown(); // the first back-end's stuck writes may finish now (same data)
        if (second != null) {
            second.close();
        }
        if (first != null) {
            first.close();
        }
        if (areaFile != null) {
            areaFile.close();
        }
        storage.close();
    }

    private static ExportedDisk export(String name, BlockBackend backend, Path socket) throws IOException {
        return new ExportedDisk(name, backend, 1, 1, socket,
                RingSelector.of(new VirtqueueFactoryComponent(), new PackedVirtqueueFactoryComponent()));
    }

    private static byte[] inflight(long mmapSize, int queueSize) {
        return Message.payload(INFLIGHT_PAYLOAD).putLong(mmapSize).putLong(0).putShort((short) 1)
                .putShort((short) queueSize).array();
    }

    /** GET_INFLIGHT_FD like QEMU's vhost_dev_get_inflight: the area, mapped and kept by the test. */
    private ByteBuffer getInflight() throws Exception {
        Message r = client.call(VhostUser.GET_INFLIGHT_FD, inflight(0, FrontendClient.QUEUE_SIZE));
        long size = r.body().getLong(0);
        assertEquals(InflightRegion.totalBytes(1, FrontendClient.QUEUE_SIZE, true), size,
                "sized for the packed layout: 32 + 32 * 64 bytes, aligned to 64");
        areaFile = new RandomAccessFile("/proc/self/fd/" + Fds.number(r.fds()[0]), "rw");
        Fds.close(r.fds()[0]);
        MappedByteBuffer map = areaFile.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, size);
        return map.order(ByteOrder.LITTLE_ENDIAN);
    }

    private void setInflight() throws Exception {
        FileDescriptor fd = areaFile.getFD();
        long size = InflightRegion.totalBytes(1, FrontendClient.QUEUE_SIZE, true);
        assertEquals(0, client.sendAck(VhostUser.SET_INFLIGHT_FD, inflight(size, FrontendClient.QUEUE_SIZE), fd));
    }

    /** Head entries in flight in the packed region (DescStatePacked.inflight at 32 + 32 * entry). */
    private static int inFlight(ByteBuffer area) {
        int n = 0;
        for (int e = 0; e < FrontendClient.QUEUE_SIZE; e++) {
            n += area.get(32 + 32 * e);
        }
        return n;
    }

    @Test
    void writesInFlightWhenTheBackEndDiesAreResubmittedByTheNextOneAndReachTheDiskOnce() throws Exception {
        first = export("pk1", hanging, dir.resolve("first.sock"));
        client = first.connect(dir.resolve("guest-ram"));
        client.negotiate(WANTED);
        assertEquals(RingFormat.PACKED, client.ringFormat());
        ByteBuffer area = getInflight();
        setInflight();
        Queue q = client.startQueue(0, client.initialBase(), false);
        client.writeReadVerify(q, 8, (byte) 0x11, true); // two requests, 6 descriptors
        assertEquals(1, area.getShort(8), "version set on the fresh region");
        assertEquals(6, area.getShort(16), "used_idx follows the ring");
        assertEquals(0, inFlight(area));

        // The disk hangs: three writes are taken and never complete.
        hanging.hold.set(true);
        byte[][] patterns = new byte[3][4096];
        for (int k = 0; k < 3; k++) {
            Arrays.fill(patterns[k], (byte) (0xa1 + k));
            client.memory.write(client.dataAddress(2 + k), patterns[k], 0, 4096);
            client.submitNoKick(q, 2 + k, VirtioBlk.T_OUT, 64 + 8 * k, 4096);
        }
        q.kick();
        assertTrue(hanging.awaitHeld(1, 10), "a write reached the hanging disk");
        // The I/O thread hangs in that write: what it took is recorded and it takes nothing more.
        int taken = inFlight(area);
        assertTrue(taken >= 1, "the back-end recorded what it took");

        // The back-end is lost (its requests never complete); a new one starts on the same disk, and the front-end
        // reconnects to it with the same area, as QEMU's vhost-user-blk does with reconnect.
        client.disconnect();
        second = export("pk2", new Passing(storage), dir.resolve("second.sock"));
        client.reconnect(second.server.socketPath());
        client.negotiate(WANTED);
        setInflight();
        // QEMU restores the base from what it last set (it cannot ask a dead back-end); the region decides.
        client.restartQueue(0, client.initialBase(), false);

        Set<Object> completed = new HashSet<>();
        for (int k = 0; k < 3; k++) {
            UsedBuffer u = client.awaitUsed(q, true, 10_000);
            assertTrue(completed.add(u.token()), "request " + u.token() + " completed once");
        }
        assertEquals(Set.of(2, 3, 4), completed, "the " + taken + " resubmitted writes and the rest completed");
        for (int k = 0; k < 3; k++) {
            assertEquals(VirtioBlk.S_OK, client.status(2 + k));
            ByteBuffer stored = ByteBuffer.allocate(4096);
            storage.read((64 + 8 * k) * 512L, new ByteBuffer[] {stored});
            assertArrayEquals(patterns[k], stored.array(), "write " + k + " reached the disk");
        }
        // Exactly once and in step: the ring continues after the five requests (15 descriptors), with nothing
        // left in flight.
        client.writeReadVerify(q, 200, (byte) 0x22, true);
        int half = 0x8000 | 21; // 7 requests of 3 descriptors, wrap counter still 1
        assertEquals(half | half << 16, client.stopQueue(0));
        assertEquals(0, inFlight(area));
        assertEquals(21, area.getShort(16));
        assertEquals(0, second.server.status().connection().refusals());
    }

    @Test
    void anAreaMadeForSplitRingsIsTakenAndAPackedRingThenRunsWithoutTracking() throws Exception {
        // SeaBIOS drives split rings; a front-end that kept the area it got then hands it back after Linux
        // negotiated packed ones: refusing it would fail the device's start, so it is mapped in its own layout.
        first = export("pk3", new Passing(storage), dir.resolve("third.sock"));
        client = first.connect(dir.resolve("guest-ram-3"));
        client.negotiate(WANTED & ~VirtioFeatures.RING_PACKED);
        Message r = client.call(VhostUser.GET_INFLIGHT_FD, inflight(0, FrontendClient.QUEUE_SIZE));
        long splitSize = r.body().getLong(0);
        assertEquals(InflightRegion.totalBytes(1, FrontendClient.QUEUE_SIZE, false), splitSize);
        areaFile = new RandomAccessFile("/proc/self/fd/" + Fds.number(r.fds()[0]), "rw");
        Fds.close(r.fds()[0]);
        client.disconnect();
        assertTrue(first.server.awaitNoFrontend(10, TimeUnit.SECONDS));
        client.reconnect(first.server.socketPath());
        client.negotiate(WANTED);
        assertEquals(RingFormat.PACKED, client.ringFormat());
        assertEquals(0, client.sendAck(VhostUser.SET_INFLIGHT_FD, inflight(splitSize, FrontendClient.QUEUE_SIZE),
                areaFile.getFD()));
        client.writeReadVerify(client.startQueue(0, client.initialBase(), false), 8, (byte) 0x33, true);
        assertEquals(0, first.server.status().connection().refusals());
    }

    /** The disk as it is; closing the export leaves it open for the test to read. */
    private static final class Passing extends ForwardingBackend {
        Passing(BlockBackend inner) {
            super(inner);
        }

        @Override
        public String kind() {
            return "passing";
        }

        @Override
        public void close() {
        }
    }
}
