package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.poll.AdaptivePollPolicy;
import io.kickplug.virtio.testkit.Await;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The vhost-user kick path of issue 12: the device's I/O thread reads the kick descriptors itself (no kick
 * poller thread), and front-ends that poll (NOFD call descriptor, requests kicked only when the device's
 * suppression asks for it, VIRTIO 1.2 section 2.7.10) are served whatever the device does with notifications:
 * EVENT_IDX on and off, device-side polling on and off. With device polling a front-end typically kicks once
 * and never again: the device keeps notifications off while it finds work.
 */
class KickPathTest {

    private static final int REQUESTS = Integer.getInteger("kickplug.vhost.kickpath.requests", 500);

    @TempDir
    Path dir;

    @Test
    void noKickPollerThreadAndKicksAreCountedOnTheIoThread() throws Exception {
        try (ExportedDisk disk = ExportedDisk.memory("kp", 1 << 20, 1, 1, dir);
                FrontendClient client = disk.connect(dir.resolve("guest-ram"))) {
            client.negotiate(VirtioBlk.F_FLUSH);
            Queue q = client.startQueue(0, 0, false);
            client.writeReadVerify(q, 3, (byte) 0x17, true);
            // The I/O thread's first handler run may find the request before it reads the kick descriptor (it
            // serves the ring on activation); the kick's counter is read on its next poll: wait for it.
            Await.await(() -> disk.server.status().connection().kicks() >= 1, "the kick was read");
            assertTrue(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().endsWith("-kick")),
                    "no kick poller thread: the I/O thread waits on the kick descriptor");
            assertTrue(disk.device.waitsOnKickDescriptors());
        }
    }

    @ParameterizedTest(name = "event_idx={0} device polling={1} call fd={2}")
    @CsvSource({"true,false,false", "true,true,false", "false,false,false", "false,true,false",
        "true,false,true", "false,true,true"})
    void pollingFrontEndsAreServed(boolean eventIdx, boolean devicePolling, boolean callFd) throws Exception {
        try (ExportedDisk disk = ExportedDisk.memory("pf", 1 << 20, 1, 1, dir);
                FrontendClient client = disk.connect(dir.resolve("guest-ram"))) {
            if (devicePolling) {
                disk.device.setPollPolicy(new AdaptivePollPolicy());
                disk.device.setPolling(true, new PollParams(TimeUnit.MILLISECONDS.toNanos(1), 2, 2));
            }
            client.negotiate(VirtioBlk.F_FLUSH | (eventIdx ? VirtioFeatures.RING_EVENT_IDX : 0));
            Queue q = client.startQueue(0, 0, !callFd);
            if (!callFd) {
                q.driver.disableCallbacks(); // Linux's poll queue: no interrupts asked for
            }
            SplittableRandom random = new SplittableRandom(12);
            for (int i = 0; i < REQUESTS; i++) {
                int depth = 1 + random.nextInt(4);
                for (int s = 0; s < depth; s++) {
                    // submit() kicks only when kickPrepare() says the device asked for it (2.7.10)
                    client.submit(q, s, VirtioBlk.T_IN, random.nextInt(2000), 512);
                }
                for (int s = 0; s < depth; s++) {
                    client.awaitUsed(q, false, 10_000);
                }
                for (int g = random.nextInt(3) == 0 ? random.nextInt(20_000) : 0; g > 0; g--) {
                    Thread.onSpinWait(); // a random gap: the device's poll window may run out meanwhile
                }
            }
            // Counted out of flight just after the used index the front-end saw (QueueWorker.publishUsed: a reset
            // that waits for them then reads matching indices), so the count settles a moment later.
            Await.await(() -> disk.device.stats().requestsInFlight() == 0, "every request counted out of flight");
            assertTrue(disk.device.stats().requestsCompleted() >= REQUESTS);
            Await.await(() -> disk.server.status().connection().kicks() >= 1, "at least the first kick was read");
        }
    }
}
