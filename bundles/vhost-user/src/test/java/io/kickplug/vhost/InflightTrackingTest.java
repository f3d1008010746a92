package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.vhost.backend.InflightRegion;
import io.kickplug.vhost.backend.SessionStatus;
import io.kickplug.vhost.protocol.Fds;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.vhost.testsupport.HeldWrites;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import java.io.FileDescriptor;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Inflight I/O tracking (QEMU docs/interop/vhost-user.rst "Inflight I/O tracking", split rings): the area
 * from GET_INFLIGHT_FD records what the back-end took, and a back-end that starts on an area with heads in
 * flight resubmits them (libvhost-user vu_check_queue_inflights) instead of losing them.
 */
class InflightTrackingTest extends ExportedDiskFixture {

    private static final int INFLIGHT_PAYLOAD = 24;

    private FileDescriptor areaFd;
    private RandomAccessFile areaFile;

    @Override
    ExportedDisk export() throws Exception {
        return ExportedDisk.memory("inf", 1 << 20, 2, 2, dir);
    }

    @AfterEach
    void closeArea() throws Exception {
        if (areaFile != null) {
            areaFile.close();
        }
    }

    private static long wanted() {
        return VirtioFeatures.RING_EVENT_IDX | VirtioFeatures.RING_INDIRECT_DESC | VirtioBlk.F_MQ
                | VirtioBlk.F_FLUSH;
    }

    private static byte[] inflight(long mmapSize, long offset, int numQueues, int queueSize) {
        return Message.payload(INFLIGHT_PAYLOAD).putLong(mmapSize).putLong(offset).putShort((short) numQueues)
                .putShort((short) queueSize).array();
    }

    /** GET_INFLIGHT_FD like QEMU's vhost_dev_get_inflight; returns the area mapped in the test. */
    private ByteBuffer getInflight(int numQueues) throws Exception {
        Message r = client.call(VhostUser.GET_INFLIGHT_FD, inflight(0, 0, numQueues, FrontendClient.QUEUE_SIZE));
        assertEquals(INFLIGHT_PAYLOAD, r.size());
        assertEquals(1, r.fds().length, "the area's descriptor comes with the reply");
        long size = r.body().getLong(0);
        assertEquals(InflightRegion.totalBytes(numQueues, FrontendClient.QUEUE_SIZE), size);
        assertEquals(0, r.body().getLong(8), "mmap offset");
        // Keep the area open through a descriptor of our own, as QEMU keeps its copy across reconnects.
        areaFile = new RandomAccessFile("/proc/self/fd/" + Fds.number(r.fds()[0]), "rw");
        Fds.close(r.fds()[0]);
        areaFd = areaFile.getFD();
        MappedByteBuffer map = areaFile.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, size);
        return map.order(ByteOrder.LITTLE_ENDIAN);
    }

    private void setInflight(int numQueues) throws Exception {
        long size = InflightRegion.totalBytes(numQueues, FrontendClient.QUEUE_SIZE);
        assertEquals(0, client.sendAck(VhostUser.SET_INFLIGHT_FD, inflight(size, 0, numQueues,
                FrontendClient.QUEUE_SIZE), areaFd));
    }

    private static int descOffset(int head) {
        return 16 + 16 * head;
    }

    private int usedIdx(int queue) {
        return client.memory.readU16(client.layout(queue).usedRing() + 2) & 0xffff;
    }

    private int availEntry(int queue, int i) {
        QueueLayout l = client.layout(queue);
        return client.memory.readU16(l.availRing() + 4 + 2L * (i % FrontendClient.QUEUE_SIZE)) & 0xffff;
    }

    @Test
    void tracksRequestsAndResubmitsWhatARestartedBackEndLeftInFlightExactlyOnce() throws Exception {
        client.negotiate(wanted());
        ByteBuffer area = getInflight(2);
        setInflight(2);
        Queue q = client.startQueue(0, 0, false);
        client.writeReadVerify(q, 8, (byte) 0x11, true);

        // Queue 0's area after two completed requests: initialised, nothing in flight, used index recorded.
        assertEquals(1, area.getShort(8), "version set on the fresh area");
        assertEquals(FrontendClient.QUEUE_SIZE, area.getShort(10), "desc_num");
        assertEquals(2, area.getShort(14), "used_idx follows the used ring");
        for (int i = 0; i < FrontendClient.QUEUE_SIZE; i++) {
            assertEquals(0, area.get(descOffset(i)), "descriptor " + i + " no longer in flight");
        }
        assertEquals(2, client.stopQueue(0));

        // Three writes reach the available ring while the back-end is stopped; the test then records them in
        // the area as a back-end that took them and died before completing them would have left it.
        byte[][] patterns = {fill((byte) 0xa1), fill((byte) 0xa2), fill((byte) 0xa3)};
        Set<Integer> heads = new HashSet<>();
        for (int k = 0; k < 3; k++) {
            client.memory.write(client.dataAddress(2 + k), patterns[k], 0, 4096);
            client.submit(q, 2 + k, VirtioBlk.T_OUT, 64 + 8 * k, 4096);
            int head = availEntry(0, 2 + k);
            heads.add(head);
            area.putLong(descOffset(head) + 8, 100 - k); // taken in reverse order: counters 100, 99, 98
            area.put(descOffset(head), (byte) 1);
        }
        assertEquals(3, heads.size());

        // The back-end restarts: QEMU reconnects, negotiates, hands the same area back and sets the base to
        // the used index (what it restores after losing the back-end).
        client.disconnect();
        assertTrue(disk.server.awaitNoFrontend(10, TimeUnit.SECONDS));
        client.reconnect(disk.server.socketPath());
        client.negotiate(wanted());
        setInflight(2);
        client.restartQueue(0, 2, false);

        Set<Object> completed = new HashSet<>();
        for (int k = 0; k < 3; k++) {
            UsedBuffer u = client.awaitUsed(q, true, 10_000);
            assertTrue(completed.add(u.token()), "token " + u.token() + " completed once");
        }
        assertEquals(Set.of(2, 3, 4), completed, "the three requests of the dead back-end were completed");
        for (int k = 0; k < 3; k++) {
            assertEquals(VirtioBlk.S_OK, client.status(2 + k));
            ByteBuffer stored = ByteBuffer.allocate(4096);
            disk.backend.read((64 + 8 * k) * 512L, new ByteBuffer[] {stored});
            assertArrayEquals(patterns[k], stored.array(), "write " + k + " reached the disk");
        }
        // Exactly once: the resubmitted chains were not taken again from the available ring, so the next
        // requests are served at indices 5 and 6 and the used ring holds 7 entries in all.
        client.writeReadVerify(q, 200, (byte) 0x22, true);
        assertEquals(7, usedIdx(0), "five plus two used entries, no duplicate");
        assertEquals(7, client.stopQueue(0));
        for (int i = 0; i < FrontendClient.QUEUE_SIZE; i++) {
            assertEquals(0, area.get(descOffset(i)), "descriptor " + i + " no longer in flight");
        }
        assertEquals(7, area.getShort(14));
        SessionStatus s = disk.server.status().connection();
        assertEquals(0, s.refusals());
    }

    /**
     * The back-end itself marks what it takes (vu_queue_inflight_get): while a write is held inside the disk
     * backend, its head is in flight in the shared area with a counter, and it is cleared (with used_idx
     * advanced) once the request completes. Without the marking a restarted back-end would lose the request.
     */
    @Test
    void aHeadHeldByTheBackEndIsMarkedInFlightInTheAreaUntilItCompletes() throws Exception {
        // Writes on the worker pool wait at the gate once it is closed; closing the disk closes the memory too.
        HeldWrites gated = new HeldWrites(new MemoryBackend(1 << 20, false), true, true);
        disk.close();
        disk = new ExportedDisk("inf", gated, 2, 2, dir.resolve("vhost2.sock"));
        client.close();
        client = disk.connect(dir.resolve("guest-ram2"));
        client.negotiate(wanted());
        ByteBuffer area = getInflight(2);
        setInflight(2);
        Queue q = client.startQueue(0, 0, false);
        client.writeReadVerify(q, 8, (byte) 0x11, true); // two requests pass the open gate: counters 0 and 1

        gated.hold.set(true);
        client.memory.write(client.dataAddress(2), fill((byte) 0x5a), 0, 4096);
        client.submit(q, 2, VirtioBlk.T_OUT, 300, 4096);
        int head = availEntry(0, 2);
        assertTrue(gated.awaitHeld(1, 10), "the write reached the disk backend");
        try {
            assertEquals(1, area.get(descOffset(head)), "head " + head + " is in flight while the backend holds it");
            assertEquals(2, area.getLong(descOffset(head) + 8), "third head taken: counter 2");
            for (int i = 0; i < FrontendClient.QUEUE_SIZE; i++) {
                if (i != head) {
                    assertEquals(0, area.get(descOffset(i)), "descriptor " + i + " is not in flight");
                }
            }
            assertEquals(2, area.getShort(14), "used_idx not yet advanced");
        } finally {
            gated.release.countDown();
        }
        UsedBuffer u = client.awaitUsed(q, true, 10_000);
        assertEquals(2, u.token());
        assertEquals(VirtioBlk.S_OK, client.status(2));
        assertEquals(0, area.get(descOffset(head)), "completed head is no longer in flight");
        assertEquals(3, area.getShort(14), "used_idx follows the used ring");
    }

    /**
     * GET_VRING_BASE is the stop point of a live migration (vhost-user.rst "Migration"): its reply becomes the
     * destination's last_avail_idx, and mainline QEMU does not migrate the inflight area, so the destination's
     * back-end starts on a fresh one. Requests the recovery put back and the device has not taken again yet are
     * counted in that index (the available ring continues after them) but were never completed: the destination
     * would never see them and the guest would wait for them for ever. So the stop lets the device take and
     * complete them first. Ordered deterministically: the disk's only I/O thread is held busy from before the
     * queue restarts until GET_VRING_BASE is waiting on the session thread.
     */
    @Test
    void getVringBaseCompletesTheRequestsARestartedBackEndHadStillToResubmit() throws Exception {
        client.negotiate(wanted());
        ByteBuffer area = getInflight(2);
        setInflight(2);
        Queue q = client.startQueue(0, 0, false);
        client.writeReadVerify(q, 8, (byte) 0x11, true);
        assertEquals(2, client.stopQueue(0));
        // Three writes a back-end took and died with (recorded in the area as in the test above).
        byte[][] patterns = {fill((byte) 0xb1), fill((byte) 0xb2), fill((byte) 0xb3)};
        for (int k = 0; k < 3; k++) {
            client.memory.write(client.dataAddress(2 + k), patterns[k], 0, 4096);
            client.submit(q, 2 + k, VirtioBlk.T_OUT, 64 + 8 * k, 4096);
            int head = availEntry(0, 2 + k);
            area.putLong(descOffset(head) + 8, 10 + k);
            area.put(descOffset(head), (byte) 1);
        }
        client.disconnect();
        assertTrue(disk.server.awaitNoFrontend(10, TimeUnit.SECONDS));
        client.reconnect(disk.server.socketPath());
        client.negotiate(wanted());
        setInflight(2);

        java.util.concurrent.CountDownLatch busy = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        disk.ioThread(0).execute(() -> {
            busy.countDown();
            try {
                release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(busy.await(10, TimeUnit.SECONDS), "the I/O thread is held");
        java.util.concurrent.atomic.AtomicInteger base = new java.util.concurrent.atomic.AtomicInteger(-1);
        java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
        Thread stopping;
        try {
            client.restartQueue(0, 2, false); // recovers the three heads; the I/O thread cannot take them yet
            stopping = new Thread(() -> {
                try {
                    base.set(client.stopQueue(0));
                } catch (Throwable t) {
                    failed.set(t);
                }
            }, "test-get-vring-base");
            stopping.start();
            // Inside GET_VRING_BASE: waiting for the recovered requests to be taken, or (without that wait) in the
            // device reset's wait for the I/O thread.
            io.kickplug.virtio.testkit.Await.await(() -> io.kickplug.vhost.testsupport.SessionThreads.waitsIn(
                    "kickplug-vhost-inf-session2", java.util.Set.of("BackendDevice.awaitResubmitted",
                    "VirtioBlkDevice$Active.stop")), java.time.Duration.ofSeconds(10),
                    "the session thread to wait inside GET_VRING_BASE");
        } finally {
            release.countDown();
        }
        stopping.join(20_000);
        assertTrue(!stopping.isAlive() && failed.get() == null, "GET_VRING_BASE answered: " + failed.get());
        assertEquals(5, base.get(), "two used before the restart, three taken by the dead back-end");
        assertEquals(5, usedIdx(0), "the three put back were completed before GET_VRING_BASE answered: a migration's"
                + " destination starts at index 5 and would never see them otherwise");
        for (int k = 0; k < 3; k++) {
            assertEquals(VirtioBlk.S_OK, client.status(2 + k));
            ByteBuffer stored = ByteBuffer.allocate(4096);
            disk.backend.read((64 + 8 * k) * 512L, new ByteBuffer[] {stored});
            assertArrayEquals(patterns[k], stored.array(), "write " + k + " reached the disk");
        }
        for (int i = 0; i < FrontendClient.QUEUE_SIZE; i++) {
            assertEquals(0, area.get(descOffset(i)), "descriptor " + i + " no longer in flight");
        }
    }

    @Test
    void malformedInflightMessagesAreRefused() throws Exception {
        // Before SET_PROTOCOL_FEATURES: INFLIGHT_SHMFD is not negotiated.
        client.send(VhostUser.GET_INFLIGHT_FD, 0, inflight(0, 0, 2, 64));
        assertEquals(0, client.receive().size(), "GET_INFLIGHT_FD without INFLIGHT_SHMFD is refused");
        client.negotiate(wanted());
        // GET_INFLIGHT_FD of a wrong size: an empty reply (the request always answers).
        client.send(VhostUser.GET_INFLIGHT_FD, 0, new byte[16]);
        assertEquals(0, client.receive().size(), "GET_INFLIGHT_FD with 16 bytes is refused");
        // More queues than the device has.
        client.send(VhostUser.GET_INFLIGHT_FD, 0, inflight(0, 0, 3, 64));
        assertEquals(0, client.receive().size(), "GET_INFLIGHT_FD for 3 queues of a 2-queue device is refused");
        // A queue size that is not a power of two.
        client.send(VhostUser.GET_INFLIGHT_FD, 0, inflight(0, 0, 2, 100));
        assertEquals(0, client.receive().size(), "GET_INFLIGHT_FD with queue size 100 is refused");

        getInflight(2);
        long size = InflightRegion.totalBytes(2, FrontendClient.QUEUE_SIZE);
        // SET_INFLIGHT_FD without a descriptor.
        assertNotEquals(0, client.sendAck(VhostUser.SET_INFLIGHT_FD, inflight(size, 0, 2, 64)));
        // SET_INFLIGHT_FD of a wrong payload size.
        assertNotEquals(0, client.sendAck(VhostUser.SET_INFLIGHT_FD, new byte[20], areaFd));
        // SET_INFLIGHT_FD whose mmap size does not match its queues.
        assertNotEquals(0, client.sendAck(VhostUser.SET_INFLIGHT_FD, inflight(size / 2, 0, 2, 64), areaFd));
        // SET_INFLIGHT_FD reaching past the end of its file.
        assertNotEquals(0, client.sendAck(VhostUser.SET_INFLIGHT_FD, inflight(size, 4096, 2, 64), areaFd));
        assertEquals(8, disk.server.status().connection().refusals());

        // The connection still works: a correct SET_INFLIGHT_FD and I/O.
        setInflight(2);
        client.writeReadVerify(client.startQueue(0, 0, false), 0, (byte) 3, true);
    }

    private static byte[] fill(byte b) {
        byte[] a = new byte[4096];
        Arrays.fill(a, b);
        return a;
    }
}
