package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.vhost.backend.InflightRegion;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import io.kickplug.vhost.protocol.Fds;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.vhost.testsupport.HeldWrites;
import java.io.FileDescriptor;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.SortedSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * MigrationSwapIT's sequence with the test front-end, step by step as QEMU 7.2 (reconnect=1) takes it, on two
 * queues with EVENT_IDX (VIRTIO 1.2 sections 2.7.7.2 and 2.7.10), inflight tracking and dirty logging: a migration
 * starts (SET_LOG_BASE, LOG_ALL), requests are in flight in the backend when the export ends for a bundle update,
 * the driver adds one request while no back-end is there (its kick goes nowhere, as QEMU's handler drops it), QEMU
 * reconnects to the new export and restarts the rings at the used index on the same inflight area, the migration
 * ends with GET_VRING_BASE on both rings, and the destination's export starts on a fresh inflight area at the
 * indices GET_VRING_BASE gave. Every request completes once with an interrupt, a driver that kicks only when
 * {@code avail_event} asks is never left waiting, and the stop point holds nothing in flight.
 */
class SwapDuringMigrationTest {

    private static final long TIMEOUT_MS = 10_000;
    private static final int INFLIGHT_PAYLOAD = 24;
    private static final long WANTED = VirtioFeatures.RING_EVENT_IDX | VirtioFeatures.RING_INDIRECT_DESC
            | VirtioBlk.F_MQ | VirtioBlk.F_FLUSH;

    @TempDir
    Path dir;

    private RandomAccessFile areaFile;
    private FileDescriptor areaFd;

    @Test
    void aSwapOfTheExportDuringAMigrationLosesNoRequestNoKickAndNoInterrupt() throws Exception {
        HeldWrites backend = new HeldWrites(new MemoryBackend(1 << 20, false), true, false);
        Path socket = dir.resolve("src.sock");
        ExportedDisk first = new ExportedDisk("mig", backend, 2, 2, socket);
        ExportedDisk second = null;
        ExportedDisk destination = null;
        try (FrontendClient client = new FrontendClient(socket, dir.resolve("guest-ram"))) {
            client.negotiate(WANTED);
            ByteBuffer area = getInflight(client, 2);
            setInflight(client, 2);
            Queue[] qs = {client.startQueue(0, 0, false), client.startQueue(1, 0, false)};
            for (Queue q : qs) {
                q.driver.enableCallbacks(); // Linux: used_event = the last used index seen
            }
            client.writeReadVerify(qs[0], 0, (byte) 0x10, true);
            client.writeReadVerify(qs[1], 8, (byte) 0x11, true);

            // The migration starts (vhost_migration_log): the log, then LOG_ALL and the rings' log flags.
            client.setLogBase(dir.resolve("log1"));
            client.setLogging(true);

            // Writes held in the backend, 3 on queue 0 and 2 on queue 1; the driver kicks only when told to.
            backend.hold.set(true);
            byte[][] patterns = new byte[6][];
            int[] slots = {10, 11, 12, 20, 21};
            for (int k = 0; k < slots.length; k++) {
                patterns[k] = fill((byte) (0xa0 + k));
                client.memory.write(client.dataAddress(slots[k]), patterns[k], 0, 4096);
                client.submit(qs[k < 3 ? 0 : 1], slots[k], VirtioBlk.T_OUT, 64 + 8L * k, 4096);
            }
            assertTrue(backend.awaitHeld(slots.length, TIMEOUT_MS / 1000), "the writes reach the backend");
            int[] before = {qs[0].received(), qs[1].received()};

            // kp:swap io.kickplug.vhost: the export ends while they are held; the reset completes them.
            AtomicReference<Throwable> closeFailed = new AtomicReference<>();
            Thread ending = new Thread(() -> {
                try {
                    first.server.close();
                } catch (Throwable t) {
                    closeFailed.set(t);
                }
            }, "test-export-close");
            ending.start();
            io.kickplug.virtio.testkit.Await.await(() -> resetWaits("kickplug-vhost-mig-session1"),
                    java.time.Duration.ofMillis(TIMEOUT_MS), "the session thread to wait in the device reset");
            backend.hold.set(false);
            backend.release.countDown();
            ending.join(TIMEOUT_MS);
            assertTrue(!ending.isAlive() && closeFailed.get() == null, "the export ended: " + closeFailed.get());
            for (int q = 0; q < 2; q++) {
                assertTrue(qs[q].awaitReceived(before[q] + 1, TIMEOUT_MS), "queue " + q + " was interrupted for"
                        + " the requests the stop completed");
            }
            int[] used = {usedIdx(client, 0), usedIdx(client, 1)};
            assertEquals(2 + 3, used[0]);
            assertEquals(2 + 2, used[1]);

            // The driver adds a write while no back-end is there; QEMU's handler swallows the kick.
            patterns[5] = fill((byte) 0xa5);
            client.memory.write(client.dataAddress(13), patterns[5], 0, 4096);
            client.submitNoKick(qs[0], 13, VirtioBlk.T_OUT, 64 + 8L * 5, 4096);
            qs[0].driver.kickPrepare(); // the driver's decision is made, whatever it was: no kick goes out

            // The new bundle's export on the same socket; QEMU reconnects and starts the device with logging on
            // (vhost_user_blk_start: SET_INFLIGHT_FD with its own area, then vhost_dev_start: LOG_ALL, the rings
            // at the used index it read from guest memory, the log base).
            second = new ExportedDisk("mig", backend, 2, 2, socket);
            client.reconnect(socket);
            client.negotiate(WANTED);
            setInflight(client, 2);
            client.setLogging(true);
            client.restartQueue(0, used[0], false);
            client.restartQueue(1, used[1], false);
            client.setLogBase(dir.resolve("log2"));

            Set<Object> done = new HashSet<>();
            for (int k = 0; k < 3; k++) {
                done.add(client.awaitUsed(qs[0], true, TIMEOUT_MS).token());
            }
            for (int k = 0; k < 2; k++) {
                done.add(client.awaitUsed(qs[1], true, TIMEOUT_MS).token());
            }
            assertEquals(Set.of(10, 11, 12, 20, 21), done, "each held write completed once");
            UsedBuffer late = client.awaitUsed(qs[0], true, TIMEOUT_MS);
            assertEquals(13, late.token(), "the write added without a back-end was taken at the restart");
            // New requests on both rings, each kicked only when avail_event says so (section 2.7.10).
            client.writeReadVerify(qs[0], 200, (byte) 0x21, true);
            client.writeReadVerify(qs[1], 208, (byte) 0x22, true);
            SortedSet<Long> marked = client.takeDirtyPages();
            assertTrue(marked.contains(client.dataAddress(1) / 4096), "the new session logs its reads: " + marked);

            // The migration ends: QEMU stops the rings; their bases are the used indices, nothing is in flight.
            int base0 = client.stopQueue(0);
            int base1 = client.stopQueue(1);
            assertEquals(usedIdx(client, 0), base0, "queue 0 stops with nothing taken and not used");
            assertEquals(usedIdx(client, 1), base1, "queue 1 stops with nothing taken and not used");
            for (int q = 0; q < 2; q++) {
                for (int i = 0; i < FrontendClient.QUEUE_SIZE; i++) {
                    assertEquals(0, area.get(q * (int) InflightRegion.queueBytes(FrontendClient.QUEUE_SIZE)
                            + 16 + 16 * i), "queue " + q + " descriptor " + i + " not in flight at the stop");
                }
            }

            // The destination: its own export of the same disk, a fresh inflight area, the stop's indices.
            destination = new ExportedDisk("mig-dst", backend, 2, 2, dir.resolve("dst.sock"));
            client.disconnect();
            client.reconnect(dir.resolve("dst.sock"));
            client.negotiate(WANTED);
            closeArea();
            getInflight(client, 2);
            setInflight(client, 2);
            client.restartQueue(0, base0, false);
            client.restartQueue(1, base1, false);
            client.writeReadVerify(qs[0], 300, (byte) 0x31, true);
            client.writeReadVerify(qs[1], 308, (byte) 0x32, true);
            for (int k = 0; k < 6; k++) {
                ByteBuffer stored = ByteBuffer.allocate(4096);
                backend.read((64 + 8L * k) * 512L, new ByteBuffer[] {stored});
                assertArrayEquals(patterns[k], stored.array(), "write " + k + " reached the disk");
            }
        } finally {
            closeArea();
            if (destination != null) {
                destination.close();
            }
            if (second != null) {
                second.close();
            }
            first.close();
        }
    }

    private static int usedIdx(FrontendClient client, int queue) {
        return client.memory.readU16(client.layout(queue).usedRing() + 2) & 0xffff;
    }

    private static byte[] inflight(long mmapSize, int numQueues) {
        return Message.payload(INFLIGHT_PAYLOAD).putLong(mmapSize).putLong(0).putShort((short) numQueues)
                .putShort((short) FrontendClient.QUEUE_SIZE).array();
    }

    /** GET_INFLIGHT_FD as QEMU's vhost_dev_get_inflight; the area stays open here as QEMU keeps it. */
    private ByteBuffer getInflight(FrontendClient client, int numQueues) throws Exception {
        Message r = client.call(VhostUser.GET_INFLIGHT_FD, inflight(0, numQueues));
        assertEquals(1, r.fds().length);
        long size = r.body().getLong(0);
        areaFile = new RandomAccessFile("/proc/self/fd/" + Fds.number(r.fds()[0]), "rw");
        Fds.close(r.fds()[0]);
        areaFd = areaFile.getFD();
        return areaFile.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, size).order(ByteOrder.LITTLE_ENDIAN);
    }

    private void setInflight(FrontendClient client, int numQueues) throws Exception {
        long size = InflightRegion.totalBytes(numQueues, FrontendClient.QUEUE_SIZE);
        assertEquals(0, client.sendAck(VhostUser.SET_INFLIGHT_FD, inflight(size, numQueues), areaFd));
    }

    private void closeArea() throws Exception {
        if (areaFile != null) {
            areaFile.close();
            areaFile = null;
        }
    }

    private static byte[] fill(byte b) {
        byte[] a = new byte[4096];
        Arrays.fill(a, b);
        return a;
    }

    /** Whether {@code sessionThread} waits in BlkStats.awaitIdle (the device reset waits for the requests). */
    private static boolean resetWaits(String sessionThread) {
        for (var e : Thread.getAllStackTraces().entrySet()) {
            if (!e.getKey().getName().equals(sessionThread) || e.getKey().getState() != Thread.State.TIMED_WAITING) {
                continue;
            }
            for (StackTraceElement f : e.getValue()) {
                if (f.getClassName().endsWith(".BlkStats") && f.getMethodName().equals("awaitIdle")) {
                    return true;
                }
            }
        }
        return false;
    }
}
