package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.vhost.backend.InflightRegion;
import io.kickplug.vhost.backend.Unmapper;
import io.kickplug.vhost.protocol.Fds;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.Footprint;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The back-end unmaps a session's guest memory the moment the session (or the region) ends, not when the
 * garbage collector runs: after a disconnect, RESET_OWNER, REM_MEM_REG or a SET_MEM_TABLE that replaces the
 * regions, the mappings are gone from /proc/self/maps within a second, with no GC requested. Guest
 * memory lives in /dev/shm files, as QEMU's memfds live in shmem. The test JVM is the back-end's process, and
 * the client unmaps its own view explicitly, so the counts are the back-end's.
 */
class SessionReleaseTest {

    /** Deadline for a mapping to disappear (the acceptance: within 1 s). */
    private static final long RELEASE_MILLIS = 1000;

    @TempDir
    Path dir;
    private Path shm;
    private ExportedDisk disk;
    private FrontendClient client;
    private String ram;

    @BeforeEach
    void export() throws Exception {
        assertTrue(Unmapper.available(), "sun.misc.Unsafe.invokeCleaner is reachable on this JVM");
        shm = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : dir;
        disk = ExportedDisk.memory("rel", 1 << 20, 2, 2, dir);
    }

    @AfterEach
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        disk.close();
    }

    private FrontendClient connect() throws Exception {
        ram = "kickplug-test-ram-" + UUID.randomUUID();
        client = new FrontendClient(disk.server.socketPath(), shm.resolve(ram), 16L << 20);
        return client;
    }

    private static long wanted() {
        return VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_MQ | VirtioBlk.F_FLUSH;
    }

    /** Connects, negotiates (ADD_MEM_REG) and runs I/O on two queues. */
    private void runSession() throws Exception {
        connect().negotiate(wanted());
        Queue q0 = client.startQueue(0, 0, false);
        Queue q1 = client.startQueue(1, 0, false);
        client.writeReadVerify(q0, 8, (byte) 1, true);
        client.writeReadVerify(q1, 16, (byte) 2, true);
        assertEquals(2, Footprint.countMappings(ram), "the client's view and the back-end's mapping");
    }

    /** The front-end disconnects; once the session has ended nothing of {@code name} stays mapped. */
    private void disconnectAndAssertUnmapped(String name) throws Exception {
        client.close();
        client = null;
        assertTrue(disk.server.awaitNoFrontend(10, TimeUnit.SECONDS));
        assertMappingsWithin(name, 0);
    }

    private void assertMappingsWithin(String file, long expected) throws InterruptedException {
        assertTrue(Footprint.await(() -> Footprint.countMappings(file) == expected, RELEASE_MILLIS),
                "mappings of " + file + " within " + RELEASE_MILLIS + " ms: " + Footprint.countMappings(file)
                        + ", expected " + expected);
    }

    @Test
    void aDisconnectUnmapsTheSessionsMemoryAndClosesItsDescriptorsAtOnce() throws Exception {
        Map<String, String> fds = Footprint.SELF.fdTargets();
        // Java threads: the JVM's own (JIT compiler) threads come and go on their own.
        long threads = javaThreads();
        runSession();
        disconnectAndAssertUnmapped(ram);
        // What the session opened, not the count: a descriptor of an earlier test may be closed meanwhile.
        assertTrue(Footprint.await(() -> Footprint.SELF.openedSince(fds).isEmpty(), RELEASE_MILLIS),
                "descriptors the session opened still open: " + Footprint.SELF.openedSince(fds));
        assertTrue(Footprint.await(() -> javaThreads() == threads, RELEASE_MILLIS),
                "threads back at " + threads + ": " + javaThreads());
    }

    @Test
    void resetOwnerUnmapsTheMemoryWhileTheConnectionStays() throws Exception {
        runSession();
        assertEquals(0, client.sendAck(VhostUser.RESET_OWNER, new byte[0]));
        assertMappingsWithin(ram, 1); // the client's own view only
        assertEquals(0, disk.server.status().connection().memoryRegions());
    }

    @Test
    void resetDeviceKeepsTheMemoryForTheNextStartAndTheDisconnectUnmapsIt() throws Exception {
        // QEMU sends only regions that changed since its last table, so the memory must survive RESET_DEVICE.
        runSession();
        assertEquals(0, client.sendAck(VhostUser.RESET_DEVICE, new byte[0]));
        assertEquals(2, Footprint.countMappings(ram));
        assertEquals(0, client.sendAck(VhostUser.SET_FEATURES, Message.u64(
                disk.device.offeredFeatures() | VhostUser.F_PROTOCOL_FEATURES)));
        client.writeReadVerify(client.startQueue(0, 0, false), 24, (byte) 3, true);
        disconnectAndAssertUnmapped(ram);
    }

    @Test
    void remMemRegUnmapsThatRegionOnly() throws Exception {
        runSession();
        String extraName = "kickplug-test-extra-" + UUID.randomUUID();
        Path extra = shm.resolve(extraName);
        long gpa = 1L << 32;
        long uva = FrontendClient.USER_BASE + (1L << 32);
        try (RandomAccessFile f = new RandomAccessFile(extra.toFile(), "rw")) {
            f.setLength(1 << 20);
            assertEquals(0, client.sendAck(VhostUser.ADD_MEM_REG, FrontendClient.region(gpa, 1 << 20, uva, 0),
                    f.getFD()));
            assertEquals(1, Footprint.countMappings(extraName));
            assertEquals(0, client.sendAck(VhostUser.REM_MEM_REG, FrontendClient.region(gpa, 1 << 20, uva, 0)));
            assertMappingsWithin(extraName, 0);
            assertEquals(2, Footprint.countMappings(ram), "the other region stays mapped");
            // The queues run again on what is left.
            client.writeReadVerify(client.queue(0), 32, (byte) 4, true);
        } finally {
            Files.deleteIfExists(extra);
        }
    }

    @Test
    void setMemTableUnmapsTheRegionsItReplaces() throws Exception {
        runSession();
        // A second file holds the "new" memory: the same layout, as QEMU sends after a hot-plug.
        String otherName = "kickplug-test-other-" + UUID.randomUUID();
        Path other = shm.resolve(otherName);
        try (RandomAccessFile f = new RandomAccessFile(other.toFile(), "rw")) {
            f.setLength(client.memoryBytes);
            byte[] table = Message.payload(8 + 32).putInt(1).putInt(0).putLong(0).putLong(client.memoryBytes)
                    .putLong(FrontendClient.USER_BASE).putLong(0).array();
            assertEquals(0, client.sendAck(VhostUser.SET_MEM_TABLE, table, f.getFD()));
            assertMappingsWithin(ram, 1);
            assertEquals(1, Footprint.countMappings(otherName));
        } finally {
            Files.deleteIfExists(other);
        }
        disconnectAndAssertUnmapped(otherName);
    }

    @Test
    void theInflightAreaIsUnmappedAtTheEndButKeptForTheFrontEnd() throws Exception {
        connect().negotiate(wanted());
        Message r = client.call(VhostUser.GET_INFLIGHT_FD, Message.payload(24).putLong(0).putLong(0)
                .putShort((short) 2).putShort((short) FrontendClient.QUEUE_SIZE).array());
        assertEquals(1, r.fds().length);
        String areaName = inflightFileName(r.fds()[0]);
        // The back-end's mapping used to create the area is gone once the reply is sent.
        assertMappingsWithin(areaName, 0);
        long size = InflightRegion.totalBytes(2, FrontendClient.QUEUE_SIZE);
        try (RandomAccessFile area = new RandomAccessFile("/proc/self/fd/" + Fds.number(r.fds()[0]), "rw")) {
            Fds.close(r.fds()[0]);
            assertEquals(0, client.sendAck(VhostUser.SET_INFLIGHT_FD, Message.payload(24).putLong(size).putLong(0)
                    .putShort((short) 2).putShort((short) FrontendClient.QUEUE_SIZE).array(), area.getFD()));
            assertEquals(1, Footprint.countMappings(areaName), "mapped while the session runs");
            client.writeReadVerify(client.startQueue(0, 0, false), 8, (byte) 5, true);
            disconnectAndAssertUnmapped(areaName);
            // The front-end's descriptor still holds the area, with what the back-end recorded (desc_num).
            assertEquals(FrontendClient.QUEUE_SIZE, Short.reverseBytes(readShort(area, 10)));
        }
    }

    @Test
    void resetDeviceUnmapsTheInflightAreaWhichTheNextStartSendsAgain() throws Exception {
        connect().negotiate(wanted());
        Message r = client.call(VhostUser.GET_INFLIGHT_FD, inflight(0));
        String areaName = inflightFileName(r.fds()[0]);
        long size = InflightRegion.totalBytes(2, FrontendClient.QUEUE_SIZE);
        try (RandomAccessFile area = new RandomAccessFile("/proc/self/fd/" + Fds.number(r.fds()[0]), "rw")) {
            Fds.close(r.fds()[0]);
            assertEquals(0, client.sendAck(VhostUser.SET_INFLIGHT_FD, inflight(size), area.getFD()));
            assertEquals(1, Footprint.countMappings(areaName));
            assertEquals(0, client.sendAck(VhostUser.RESET_DEVICE, new byte[0]));
            assertMappingsWithin(areaName, 0);
            assertEquals(2, Footprint.countMappings(ram), "the memory stays (RESET_DEVICE): the view and the mapping");
            assertEquals(0, client.sendAck(VhostUser.SET_INFLIGHT_FD, inflight(size), area.getFD()));
            assertEquals(1, Footprint.countMappings(areaName));
        }
    }

    /**
     * The name of this session's inflight area file (from the descriptor GET_INFLIGHT_FD returned), so that the
     * mappings counted are this test's only: other tests of this JVM may still hold areas of their own.
     */
    private static String inflightFileName(java.io.FileDescriptor fd) throws java.io.IOException {
        String target = Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/fd/" + Fds.number(fd)))
                .getFileName().toString();
        int deleted = target.indexOf(" (deleted)");
        String name = deleted < 0 ? target : target.substring(0, deleted);
        assertTrue(name.startsWith("kickplug-inflight-"), name);
        return name;
    }

    private static byte[] inflight(long mmapSize) {
        return Message.payload(24).putLong(mmapSize).putLong(0).putShort((short) 2)
                .putShort((short) FrontendClient.QUEUE_SIZE).array();
    }

    private static long javaThreads() {
        return java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount();
    }

    private static short readShort(RandomAccessFile f, long at) throws Exception {
        f.seek(at);
        return f.readShort();
    }
}
