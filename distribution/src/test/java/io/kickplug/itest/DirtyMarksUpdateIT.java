package io.kickplug.itest;

import static io.kickplug.itest.StateDaemon.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.launcher.ControlClient;
import io.kickplug.vhost.frontend.FrontendClient;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.testkit.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.SortedSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An update of the vhost-user bundle itself ({@code kp:swap io.kickplug.vhost}) during a live migration, in a daemon
 * (issue 45, docs/real-guest.md "Swaps during a migration"): the test front-end logs, reads (the device marks the
 * pages), does not collect, and the update ends its session; the bundle's next revision finds the marks in its
 * persistent data area and ORs them into the log the front-end gives its new session (LOG_ALL, the ring, then
 * SET_LOG_BASE, as QEMU's vhost_dev_start with {@code reconnect=1}). Every page the old session left marked must be
 * marked in the new log before the ring is enabled.
 */
class DirtyMarksUpdateIT {

    private static final long TIMEOUT_SECONDS = 60;

    private Path work;
    private StateDaemon daemon;

    @AfterEach
    void stop() throws Exception {
        StateDaemon.stopAndDelete(daemon, work);
    }

    @Test
    void marksTheOldRevisionsSessionLeftReachTheNextRevisionsLog() throws Exception {
        work = Files.createTempDirectory(Path.of("/tmp"), "kp-dm"); // short: sun_path holds 107 bytes
        daemon = new StateDaemon(work);
        Path control = work.resolve("ctl.sock");
        Path socket = work.resolve("vm.sock");
        daemon.start(control);
        try (ControlClient c = new ControlClient(control)) {
            ok(c, "kp:attach dm 16M");
            ok(c, "kp:vhost dm --socket " + socket);
            try (FrontendClient client = new FrontendClient(socket, work.resolve("guest-ram"),
                    FrontendClient.MEMORY_BYTES, new VirtqueueFactoryComponent(), new GuestMemoryFactoryComponent())) {
                client.negotiate(VirtioFeatures.RING_EVENT_IDX);
                FrontendClient.Queue q = client.startQueue(0, 0, false);
                client.setLogBase(work.resolve("log1"));
                client.setLogging(true);
                client.takeDirtyPages();
                client.writeReadVerify(q, 0, (byte) 0x45, true);
                client.writeReadVerify(q, 8, (byte) 0x46, true);
                long read = client.dataAddress(1) / 4096;

                String swap = ok(c, "kp:swap io.kickplug.vhost");
                SortedSet<Long> left = client.peekDirtyPages();
                assertTrue(left.contains(read), () -> "the old session marked its read: " + left);
                // The new revision makes the export again once the disk is back (kp:swap waited for the disk).
                Await.await(() -> listed(c, "\"pending_marks\":" + left.size()),
                        Duration.ofSeconds(TIMEOUT_SECONDS), "the export made again, with " + left.size()
                        + " pages pending (" + swap + ")");

                client.disconnect();
                Await.await(() -> reconnected(client, socket), Duration.ofSeconds(TIMEOUT_SECONDS),
                        "the export made again by the new revision");
                client.negotiate(VirtioFeatures.RING_EVENT_IDX);
                client.setLogging(true);
                int used = client.memory.readU16(client.layout(0).usedRing() + 2) & 0xffff;
                client.restartQueue(0, used, false, false);
                client.setLogBase(work.resolve("log2"));
                SortedSet<Long> carried = client.peekDirtyPages();
                assertEquals(left, carried, () -> "the new log holds the old session's marks\n" + daemon.log());
                String after = ok(c, "kp:vhost-list --json");
                assertTrue(after.contains("\"pages_carried\":" + left.size()) && after.contains("\"pending_marks\":0"),
                        after);
            }
        }
        String log = daemon.log();
        assertTrue(log.contains("saved in the bundle's data area"), log);
        assertTrue(log.contains("read from the bundle's data area"), log);
        assertTrue(log.contains("are marked in the new dirty log"), log);
    }

    private static boolean listed(ControlClient c, String what) {
        try {
            return ok(c, "kp:vhost-list --json").contains(what);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (AssertionError notYet) {
            return false; // the command is not there again yet
        }
    }

    private static boolean reconnected(FrontendClient client, Path socket) {
        try {
            client.reconnect(socket);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
