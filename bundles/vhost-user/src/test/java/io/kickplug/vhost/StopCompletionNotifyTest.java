package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.vhost.testsupport.HeldWrites;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Requests that complete while the back-end stops the device are notified (VIRTIO 1.2 section 2.7.7.2, EVENT_IDX:
 * the used index passed {@code used_event}). A vhost-user stop is no virtio reset for the guest: its driver keeps
 * running and waits for an interrupt for the requests it handed over.
 *
 * <p>The bug this guards against (issue 11, BackendCrashIT's swap phase, 1 stall in 4 runs): {@code felix:update
 * io.kickplug.blk} ends the vhost-user export; the session's device reset closes each queue's notification
 * channel first and then waits for the requests in flight, which complete into the used ring with no
 * notification. QEMU reconnects and restarts the rings at the used index; nothing is left in flight or in the
 * available ring, so no later completion notifies either, and Linux's virtio_blk, whose fio jobs had all their
 * requests among those, waits for the interrupt forever. The same happens on a stop inside a session (the
 * front-end enables another queue, changes the memory table, ...).
 *
 * <p>Deterministic: the backend holds the writes until the session thread waits inside the device reset for
 * them (BlkStats.awaitIdle on its stack, which the reset reaches only after closing the channels).
 */
class StopCompletionNotifyTest {

    private static final int REQUESTS = 3;
    private static final long TIMEOUT_MS = 10_000;

    @TempDir
    Path dir;

    /** The bundle update's path: the export ends (VhostExports.close), then a new one serves the same socket. */
    @Test
    void requestsCompletedWhileTheExportEndsAreNotifiedBeforeTheFrontEndReconnects() throws Exception {
        // Writes wait on the device's worker pool until released; reads and flushes pass.
        HeldWrites backend = new HeldWrites(new MemoryBackend(1 << 20, false), true, true);
        backend.hold.set(true);
        Path socket = dir.resolve("vhost.sock");
        ExportedDisk first = new ExportedDisk("swap", backend, 1, 1, socket);
        try (FrontendClient client = new FrontendClient(socket, dir.resolve("guest-ram"))) {
            client.negotiate(VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_FLUSH);
            Queue q = client.startQueue(0, 0, false);
            q.driver.enableCallbacks(); // Linux: used_event = last used index seen (0)
            for (int s = 0; s < REQUESTS; s++) {
                client.submit(q, s, VirtioBlk.T_OUT, s, 512);
            }
            assertTrue(backend.awaitHeld(REQUESTS, TIMEOUT_MS / 1000), "the writes reach the backend");
            int before = q.received();

            // The update of io.kickplug.blk: VhostCommands deactivates and closes the export.
            AtomicReference<Throwable> closeFailed = new AtomicReference<>();
            Thread ending = new Thread(() -> {
                try {
                    first.server.close();
                } catch (Throwable t) {
                    closeFailed.set(t);
                }
            }, "test-export-close");
            ending.start();
            awaitResetWaitingForRequests("kickplug-vhost-swap-session1");
            backend.release.countDown(); // the writes complete now, inside the device reset
            ending.join(TIMEOUT_MS);
            assertTrue(!ending.isAlive() && closeFailed.get() == null, "the export ended: " + closeFailed.get());
            assertEquals(REQUESTS, usedIdx(client), "the reset completed the requests in flight");

            // The bundle returns: a new device on the same socket; QEMU reconnects and restarts the ring at the
            // used index (GET_VRING_BASE failed: virtio_queue_restore_last_avail_idx).
            try (ExportedDisk second = new ExportedDisk("swap", backend, 1, 1, socket)) {
                client.reconnect(socket);
                client.negotiate(VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_FLUSH);
                client.restartQueue(0, usedIdx(client), false);
                assertTrue(q.awaitReceived(before + 1, TIMEOUT_MS), "the driver is notified of the "
                        + REQUESTS + " requests completed during the swap (used.idx " + usedIdx(client)
                        + ", used_event " + usedEvent(client) + "); none came");
                for (int s = 0; s < REQUESTS; s++) {
                    client.awaitUsed(q, true, TIMEOUT_MS);
                    assertEquals(VirtioBlk.S_OK, client.status(s));
                }
                // And the ring goes on.
                client.writeReadVerify(q, 8, (byte) 0x5a, true);
                assertEquals(0, second.server.status().connection().refusals());
            }
        } finally {
            first.close();
        }
    }

    /** A stop inside one session (the front-end enables a second queue) with requests in flight on the first. */
    @Test
    void requestsCompletedWhileTheDeviceRestartsInsideASessionAreNotified() throws Exception {
        // Writes wait on the device's worker pool until released; reads and flushes pass.
        HeldWrites backend = new HeldWrites(new MemoryBackend(1 << 20, false), true, true);
        backend.hold.set(true);
        try (ExportedDisk disk = new ExportedDisk("restart", backend, 2, 1, dir.resolve("vhost.sock"));
                FrontendClient client = disk.connect(dir.resolve("guest-ram"))) {
            client.negotiate(VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_MQ | VirtioBlk.F_FLUSH);
            Queue q = client.startQueue(0, 0, false);
            q.driver.enableCallbacks();
            for (int s = 0; s < REQUESTS; s++) {
                client.submit(q, s, VirtioBlk.T_OUT, s, 512);
            }
            assertTrue(backend.awaitHeld(REQUESTS, TIMEOUT_MS / 1000), "the writes reach the backend");
            int before = q.received();
            // Queue 1's setup on another thread: its ENABLE makes the session thread stop the device, and the
            // reply comes only after the reset, which waits for the gated writes.
            AtomicReference<Queue> started = new AtomicReference<>();
            AtomicReference<Throwable> startFailed = new AtomicReference<>();
            Thread starting = new Thread(() -> {
                try {
                    started.set(client.startQueue(1, 0, false));
                } catch (Throwable t) {
                    startFailed.set(t);
                }
            }, "test-start-queue-1");
            starting.start();
            awaitResetWaitingForRequests("kickplug-vhost-restart-session1");
            backend.release.countDown();
            starting.join(TIMEOUT_MS);
            assertTrue(!starting.isAlive() && startFailed.get() == null, "queue 1 started: " + startFailed.get());
            Queue other = started.get();
            assertTrue(q.awaitReceived(before + 1, TIMEOUT_MS), "the driver is notified of the " + REQUESTS
                    + " requests completed during the restart (used.idx " + usedIdx(client) + ", used_event "
                    + usedEvent(client) + "); none came");
            for (int s = 0; s < REQUESTS; s++) {
                client.awaitUsed(q, true, TIMEOUT_MS);
                assertEquals(VirtioBlk.S_OK, client.status(s));
            }
            client.writeReadVerify(other, 16, (byte) 0x3c, true);
            assertEquals(0, disk.server.status().connection().refusals());
        }
    }

    private static int usedIdx(FrontendClient client) {
        QueueLayout l = client.layout(0);
        return client.memory.readU16(l.usedRing() + 2) & 0xffff;
    }

    private static int usedEvent(FrontendClient client) {
        QueueLayout l = client.layout(0);
        return client.memory.readU16(l.availRing() + 4 + 2L * l.size()) & 0xffff;
    }

    /**
     * Waits until the session thread waits in the device reset for the requests in flight (BlkStats.awaitIdle):
     * the reset has closed the queues' notification channels by then.
     */
    private static void awaitResetWaitingForRequests(String sessionThread) {
        io.kickplug.virtio.testkit.Await.await(() -> resetWaitsForRequests(sessionThread),
                java.time.Duration.ofMillis(TIMEOUT_MS),
                "the session thread " + sessionThread + " to wait in the device reset");
    }

    /** Whether {@code sessionThread} is in a timed wait inside BlkStats.awaitIdle now. */
    private static boolean resetWaitsForRequests(String sessionThread) {
        for (var e : Thread.getAllStackTraces().entrySet()) {
            Thread t = e.getKey();
            if (!t.getName().equals(sessionThread) || t.getState() != Thread.State.TIMED_WAITING) {
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
