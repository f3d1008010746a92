package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.nio.file.Path;
import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Dirty logging for live migration (vhost-user.rst "Migration"): after SET_LOG_BASE and VHOST_F_LOG_ALL, every
 * 4 KiB page of guest physical address the device wrote is marked in the log and no other page is, checked against
 * the writes the test front-end knows the device makes: an IN request's data and every request's status byte, and
 * the ring writes (split: the used ring, "used-ring writes are logged at log_guest_addr + offset"; packed: the used
 * descriptors in the descriptor ring and the device event suppression area). Two queues on two I/O threads, split
 * and packed. An OUT request's data pages are read only and must stay clear; so must everything after LOG_ALL is off.
 */
class DirtyLogTest {

    private static final long PAGE = 4096;
    /** IN and OUT data of 8 KiB from slot + 512: three pages, the first shared with the slot's status byte. */
    private static final int DATA = 8192;
    private static final int PER_QUEUE = 12;

    private ExportedDisk disk;
    private FrontendClient client;

    @AfterEach
    void close() throws Exception {
        if (client != null) {
            client.close();
        }
        if (disk != null) {
            disk.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"split", "packed"})
    void everyPageTheDeviceWroteIsMarkedAndNoOther(String format, @org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        boolean packed = format.equals("packed");
        disk = new ExportedDisk("log-" + format, new MemoryBackend(8 << 20, false), 2, 2, dir.resolve("vhost.sock"),
                RingSelector.of(new VirtqueueFactoryComponent(), new PackedVirtqueueFactoryComponent()));
        client = disk.connect(dir.resolve("guest-ram"));
        client.negotiate(VirtioFeatures.RING_EVENT_IDX | (packed ? VirtioFeatures.RING_PACKED : 0));
        assertEquals(packed ? RingFormat.PACKED : RingFormat.SPLIT, client.ringFormat());
        assertTrue((client.getU64(VhostUser.GET_FEATURES) & VhostUser.F_LOG_ALL) != 0, "VHOST_F_LOG_ALL offered");
        assertTrue((client.getU64(VhostUser.GET_PROTOCOL_FEATURES) & VhostUser.PROTOCOL_F_LOG_SHMFD) != 0,
                "LOG_SHMFD offered");
        Queue[] qs = {client.startQueue(0, client.initialBase(), false), client.startQueue(1, client.initialBase(), false)};
        client.writeReadVerify(qs[0], 0, (byte) 0x5a, true); // before logging: not in the log
        client.writeReadVerify(qs[1], 8, (byte) 0x5b, true);

        // As QEMU's vhost_migration_log: the log base (reply awaited), then LOG_ALL, then the rings' log flags.
        assertEquals(0, client.setLogBase(dir.resolve("log")), "SET_LOG_BASE's u64 reply");
        client.setLogging(true);
        assertTrue(connection().logging(), "the device logs");
        client.takeDirtyPages(); // what the restart wrote (ring event fields) is not this test's business

        SortedSet<Long> expected = new TreeSet<>();
        SortedSet<Long> readOnly = new TreeSet<>();
        for (int round = 0; round < 2; round++) {
            for (int q = 0; q < 2; q++) {
                for (int k = 0; k < PER_QUEUE / 2; k++) {
                    int slot = q * PER_QUEUE + round * (PER_QUEUE / 2) + k;
                    boolean in = (slot % 3) != 0;
                    long data = client.dataAddress(slot);
                    if (!in) {
                        client.memory.fill(data, DATA, (byte) slot);
                    }
                    client.submitNoKick(qs[q], slot, in ? VirtioBlk.T_IN : VirtioBlk.T_OUT, 16L * slot, DATA);
                    long status = data - 512 + 16;
                    expected.add(status / PAGE);
                    for (long p = data / PAGE; p <= (data + DATA - 1) / PAGE; p++) {
                        (in ? expected : readOnly).add(p);
                    }
                }
                qs[q].kick();
            }
            for (int q = 0; q < 2; q++) {
                for (int k = 0; k < PER_QUEUE / 2; k++) {
                    UsedBuffer u = client.awaitUsed(qs[q], true, 10_000);
                    assertEquals(VirtioBlk.S_OK, client.status((Integer) u.token()));
                }
            }
        }
        readOnly.removeAll(expected);
        for (int q = 0; q < 2; q++) {
            QueueLayout l = client.layout(q);
            if (packed) {
                pages(expected, l.descTable(), 16L * l.size()); // used descriptors are written in place
                pages(expected, l.usedRing(), 4); // the device event suppression area
            } else {
                pages(expected, l.usedRing(), 4 + 8L * l.size() + 2); // flags, idx, ring, avail_event
            }
        }
        SortedSet<Long> marked = client.takeDirtyPages();
        SortedSet<Long> missing = new TreeSet<>(expected);
        missing.removeAll(marked);
        SortedSet<Long> extra = new TreeSet<>(marked);
        extra.removeAll(expected);
        assertTrue(missing.isEmpty(), () -> "pages the device wrote but did not mark: " + missing);
        assertTrue(extra.isEmpty(), () -> "pages marked that the device did not write: " + extra);
        for (long p : readOnly) {
            assertFalse(marked.contains(p), "an OUT request's data page " + p + " is only read");
        }
        assertTrue(connection().pagesMarked() >= expected.size(), "kp:stats' pages marked counts them");

        // Logging off: the device runs the plain views again and marks nothing.
        client.setLogging(false);
        assertFalse(connection().logging());
        // The logging device marks a page after it stored to it, so the mark of the last used.idx above can land
        // after the take above saw that entry; the restart that turned logging off has stopped that device, so
        // whatever it marked is in the log now: clear it, and check only what the plain device does.
        client.takeDirtyPages();
        client.writeReadVerify(qs[0], 0, (byte) 0x6a, true);
        client.writeReadVerify(qs[1], 8, (byte) 0x6b, true);
        assertEquals(new TreeSet<Long>(), client.takeDirtyPages(), "nothing marked with LOG_ALL off");

        // GET_VRING_BASE is the stop point; the rings resume where they stopped, logging on again.
        client.setLogging(true);
        client.takeDirtyPages();
        client.writeReadVerify(qs[1], 24, (byte) 0x7b, true);
        SortedSet<Long> last = client.takeDirtyPages();
        assertTrue(last.contains(client.dataAddress(1) / PAGE), "the read's data page: " + last);
    }

    /**
     * A bundle update under the export during a migration ends the front-end's session; QEMU (reconnect=1) then
     * starts the device again with logging enabled (vhost_dev_start): SET_FEATURES with LOG_ALL <em>before</em>
     * SET_LOG_BASE, then the rings. The new session marks from its first write; what the old one completed was
     * marked before its socket closed.
     */
    @org.junit.jupiter.api.Test
    void aNewSessionDuringAMigrationLogsOnceTheLogArrivesAfterLogAll(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        disk = ExportedDisk.memory("log-reconnect", 1 << 20, 1, 1, dir);
        client = disk.connect(dir.resolve("guest-ram"));
        client.negotiate(VirtioFeatures.RING_EVENT_IDX);
        Queue q = client.startQueue(0, 0, false);
        client.setLogBase(dir.resolve("log1"));
        client.setLogging(true);
        client.takeDirtyPages();
        client.writeReadVerify(q, 0, (byte) 0x31, true);
        long readPage = client.dataAddress(1) / PAGE;
        assertTrue(client.takeDirtyPages().contains(readPage), "the old session marked its read");

        client.disconnect();
        assertTrue(disk.server.awaitNoFrontend(10, java.util.concurrent.TimeUnit.SECONDS));
        client.reconnect(disk.server.socketPath());
        client.negotiate(VirtioFeatures.RING_EVENT_IDX);
        client.setLogging(true); // LOG_ALL first: no log yet, the device cannot mark
        client.restartQueue(0, 2, false);
        assertFalse(connection().logging(), "no log base yet");
        client.setLogBase(dir.resolve("log2"));
        assertTrue(connection().logging(), "the running device restarted logged when the log arrived");
        client.takeDirtyPages();
        client.writeReadVerify(q, 8, (byte) 0x32, true);
        SortedSet<Long> marked = client.takeDirtyPages();
        assertTrue(marked.contains(readPage) && marked.contains((client.dataAddress(0) - 512) / PAGE),
                () -> "the new session's read and its status bytes: " + marked);
    }

    private static void pages(SortedSet<Long> into, long gpa, long length) {
        for (long p = gpa / PAGE; p <= (gpa + length - 1) / PAGE; p++) {
            into.add(p);
        }
    }

    private SessionStatus connection() {
        return disk.server.status().connection();
    }
}
