package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.newsclub.net.unix.AFPipe;

/**
 * A notification sent to a call descriptor that the front-end then replaces reaches the new one (issue 11).
 * QEMU 7.2 connects with its masked notifier as each ring's call descriptor (vhost_virtqueue_init), starts the
 * rings (KICK, ENABLE) and only then sends the guest's notifier (vhost_user_blk_start unmasks after
 * vhost_dev_start), never looking at what reached the masked one. A completion in that window, such as a
 * request pending in the available ring at a reconnect, must still interrupt the guest: with EVENT_IDX no later
 * completion would (VIRTIO 1.2 section 2.7.7.2: {@code used_event} stays behind the used index).
 */
class CallReplacementTest {

    private static final long TIMEOUT_MS = 10_000;

    @TempDir
    Path dir;

    @Test
    void aCompletionSignalledToQemusMaskedNotifierIsSignalledAgainWhenQemuUnmasks() throws Exception {
        try (ExportedDisk disk = ExportedDisk.memory("mask", 1 << 20, 1, 1, dir);
                FrontendClient client = disk.connect(dir.resolve("guest-ram"));
                AFPipe masked = AFPipe.open()) {
            client.negotiate(VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_FLUSH);
            assertEquals(0, client.sendAck(VhostUser.SET_VRING_CALL, Message.u64(0),
                    masked.sink().getFileDescriptor()));
            Queue q = client.startQueueMasked(0);
            q.driver.enableCallbacks();
            client.submit(q, 0, VirtioBlk.T_OUT, 0, 512);
            // The completion's notification goes to the masked notifier, which the guest never sees.
            ByteBuffer counter = ByteBuffer.allocate(8);
            while (counter.hasRemaining()) {
                assertTrue(masked.source().read(counter) > 0, "the masked notifier is written");
            }
            client.unmask(q);
            assertTrue(q.awaitReceived(1, TIMEOUT_MS), "the guest's notifier is signalled for the completion"
                    + " that went to the masked one");
            client.awaitUsed(q, true, TIMEOUT_MS);
            assertEquals(VirtioBlk.S_OK, client.status(0));
            client.writeReadVerify(q, 8, (byte) 0x6b, true);
            assertEquals(0, disk.server.status().connection().refusals());
        }
    }
}
