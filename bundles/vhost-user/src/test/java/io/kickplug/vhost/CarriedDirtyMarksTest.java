package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import io.kickplug.vhost.server.PendingMarks;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The marks a session's dirty log still holds when the session ends reach the log of the export's next session
 * (issue 45, docs/real-guest.md "Swaps during a migration"). QEMU 7.2 collects the log by exchanging its words with
 * 0, and on a back-end disconnect marks the vhost device stopped before the stop that would sync it, so the bits the
 * old session set after QEMU's last collection are never collected: the test front-end plays that QEMU, which does
 * not collect after its requests, and reconnects as QEMU with {@code reconnect=1} does during a migration
 * (vhost_dev_start: SET_FEATURES with LOG_ALL, the rings, SET_LOG_BASE with a new memfd, then SET_VRING_ENABLE).
 * Every page the old session marked must be marked in the new log before the new session's device runs.
 *
 * <p>Three ways the session ends: the front-end disconnects ({@code disconnect}); the export ends and is made again
 * by the same bundle with its store (an update of the device or disk bundle: {@code export-made-again}); the
 * export's store is saved to files and a new store loads them (an update of the vhost-user bundle, whose
 * persistent data area keeps the files: {@code bundle-updated}).
 */
class CarriedDirtyMarksTest {

    private static final long PAGE = 4096;
    private static final long TIMEOUT_MS = 10_000;
    /** IN and OUT requests of 8 KiB per slot, in 12 slots over two queues. */
    private static final int DATA = 8192;

    @TempDir
    Path dir;

    private final VirtqueueFactory rings = new VirtqueueFactoryComponent();
    private MemoryBackend backend;
    private ExportedDisk first;
    private ExportedDisk second;
    private FrontendClient client;

    @AfterEach
    void close() throws Exception {
        if (client != null) {
            client.close();
        }
        if (second != null) {
            second.close();
        }
        if (first != null) {
            first.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"disconnect", "export-made-again", "bundle-updated"})
    void everyPageTheOldSessionMarkedIsMarkedInTheNewSessionsLog(String end) throws Exception {
        PendingMarks marks = new PendingMarks();
        Path socket = dir.resolve("vhost.sock");
        Queue[] qs = startLoggingSession("carry", marks, socket);
        SortedSet<Long> written = submitRequests(qs);

        // The session ends; QEMU does not collect what its log still holds.
        switch (end) {
            case "disconnect" -> client.disconnect();
            case "export-made-again", "bundle-updated" -> first.server.close();
            default -> throw new IllegalArgumentException(end);
        }
        assertTrue(first.server.awaitNoFrontend(TIMEOUT_MS, TimeUnit.MILLISECONDS), "the session ended");
        SortedSet<Long> left = client.peekDirtyPages();
        assertTrue(left.containsAll(written), () -> "the old session marked what it wrote: " + written + " in " + left);
        assertEquals(left.size(), marks.pendingPages("carry"), "every bit the old log holds is pending");

        ExportedDisk serving = first;
        if (!end.equals("disconnect")) {
            PendingMarks next = marks;
            if (end.equals("bundle-updated")) {
                // The old revision saves its store; the classes and the store die with it; the next revision's
                // store loads the files from the same data area.
                Path data = dir.resolve("bundle-data");
                marks.save(data);
                assertEquals(1, Files.list(data).count(), "one file for the export");
                next = new PendingMarks();
                next.load(data);
                assertEquals(0, Files.list(data).count(), "the file is consumed");
            }
            second = new ExportedDisk("carry", backend, 2, 2, socket, rings, next);
            serving = second;
        }

        restartLogged(socket);
        SortedSet<Long> carried = client.peekDirtyPages();
        assertEquals(left, carried, "the new log holds every mark the old session left, before the device runs");
        assertEquals(left.size(), serving.server.status().connection().pagesCarried(), "kp:vhost-list counts them");
        assertEquals(0, serving.server.status().pendingMarks(), "nothing pending once carried");

        for (Queue q : qs) {
            client.enableQueue(q.index, true);
        }
        client.writeReadVerify(qs[0], 400, (byte) 0x42, true);
        SortedSet<Long> collected = client.takeDirtyPages();
        assertTrue(collected.containsAll(left), "QEMU collects the old session's marks from the new log");
        assertTrue(collected.contains(client.dataAddress(1) / PAGE), "and the new session's read");
    }

    /**
     * A migration that ended while no session was there: the next session starts its device without LOG_ALL, the
     * pending marks are dropped (they belong to the migration that ended), and a later migration's log does not
     * get them.
     */
    @Test
    void marksPendingWhenTheNextSessionStartsWithoutLoggingAreDropped() throws Exception {
        PendingMarks marks = new PendingMarks();
        Path socket = dir.resolve("vhost.sock");
        Queue[] qs = startLoggingSession("carry-off", marks, socket);
        SortedSet<Long> written = submitRequests(qs);
        client.disconnect();
        assertTrue(first.server.awaitNoFrontend(TIMEOUT_MS, TimeUnit.MILLISECONDS));
        assertTrue(marks.pendingPages("carry-off") >= written.size());

        client.reconnect(socket);
        client.negotiate(VirtioFeatures.RING_EVENT_IDX);
        client.restartQueue(0, usedIdx(0), false);
        client.restartQueue(1, usedIdx(1), false);
        assertEquals(0, marks.pendingPages("carry-off"), "dropped when the device started without logging");

        // A later migration on this session: its log holds only what this session writes.
        client.setLogBase(dir.resolve("log2"));
        client.setLogging(true);
        client.takeDirtyPages();
        client.writeReadVerify(qs[0], 400, (byte) 0x43, true);
        SortedSet<Long> collected = client.takeDirtyPages();
        long oldRead = client.dataAddress(3) / PAGE; // slot 3 was an IN request of the old session only
        assertTrue(written.contains(oldRead));
        assertFalse(collected.contains(oldRead), () -> "an old session's page in a later migration's log: " + collected);
    }

    /** A new session on another socket (another front-end) does not get the marks. */
    @Test
    void marksLeftOnAnotherSocketAreNotCarried() throws Exception {
        PendingMarks marks = new PendingMarks();
        Queue[] qs = startLoggingSession("carry-sock", marks, dir.resolve("a.sock"));
        submitRequests(qs);
        first.server.close();
        assertTrue(first.server.awaitNoFrontend(TIMEOUT_MS, TimeUnit.MILLISECONDS));
        assertTrue(marks.pendingPages("carry-sock") > 0);
        assertNotNull(marks.entry("carry-sock"));

        second = new ExportedDisk("carry-sock", backend, 2, 2, dir.resolve("b.sock"), rings, marks);
        restartLogged(dir.resolve("b.sock"));
        assertEquals(new TreeSet<Long>(), client.peekDirtyPages(), "nothing carried to another socket's session");
        assertEquals(0, marks.pendingPages("carry-sock"));
    }

    /**
     * Exports {@code export} at {@code socket} with {@code marks} as its store, connects the test front-end with two
     * queues and starts a migration as vhost_migration_log does (the log base, LOG_ALL and the rings' log flags);
     * QEMU's first sync collects what the restart marked. Returns the two queues.
     */
    private Queue[] startLoggingSession(String export, PendingMarks marks, Path socket) throws Exception {
        backend = new MemoryBackend(1 << 20, false);
        first = new ExportedDisk(export, backend, 2, 2, socket, rings, marks);
        client = new FrontendClient(socket, dir.resolve("guest-ram"));
        client.negotiate(VirtioFeatures.RING_EVENT_IDX);
        Queue[] qs = {client.startQueue(0, 0, false), client.startQueue(1, 0, false)};
        client.setLogBase(dir.resolve("log1"));
        client.setLogging(true);
        client.takeDirtyPages();
        return qs;
    }

    /**
     * QEMU reconnects at {@code socket} and starts the device with logging on, as vhost_dev_start does: LOG_ALL,
     * both rings (not enabled yet), then a new log base.
     */
    private void restartLogged(Path socket) throws Exception {
        client.reconnect(socket);
        client.negotiate(VirtioFeatures.RING_EVENT_IDX);
        client.setLogging(true);
        for (int q = 0; q < 2; q++) {
            client.restartQueue(q, usedIdx(q), false, false);
        }
        client.setLogBase(dir.resolve("log2"));
    }

    /**
     * Twelve requests over both queues, IN and OUT, completed; returns the pages the device wrote: IN data, status
     * bytes and the used rings.
     */
    private SortedSet<Long> submitRequests(Queue[] qs) throws Exception {
        SortedSet<Long> written = new TreeSet<>();
        for (int q = 0; q < 2; q++) {
            for (int k = 0; k < 6; k++) {
                int slot = 2 + q * 6 + k;
                boolean in = slot % 2 == 1;
                long data = client.dataAddress(slot);
                if (!in) {
                    client.memory.fill(data, DATA, (byte) slot);
                }
                client.submitNoKick(qs[q], slot, in ? VirtioBlk.T_IN : VirtioBlk.T_OUT, 16L * slot, DATA);
                written.add((data - 512 + 16) / PAGE);
                if (in) {
                    for (long p = data / PAGE; p <= (data + DATA - 1) / PAGE; p++) {
                        written.add(p);
                    }
                }
            }
            qs[q].kick();
        }
        for (int q = 0; q < 2; q++) {
            for (int k = 0; k < 6; k++) {
                UsedBuffer u = client.awaitUsed(qs[q], true, TIMEOUT_MS);
                assertEquals(VirtioBlk.S_OK, client.status((Integer) u.token()));
            }
            QueueLayout l = client.layout(q);
            for (long p = l.usedRing() / PAGE; p <= (l.usedRing() + 4 + 8L * l.size() + 1) / PAGE; p++) {
                written.add(p);
            }
        }
        return written;
    }

    private int usedIdx(int queue) {
        return client.memory.readU16(client.layout(queue).usedRing() + 2) & 0xffff;
    }
}
