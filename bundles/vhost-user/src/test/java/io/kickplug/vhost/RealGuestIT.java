package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.ImageFileBackend;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.virtio.testkit.Await;
import io.kickplug.virtio.testkit.OutputProcess;
import io.kickplug.virtio.testkit.RealGuestOutput;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A real Linux guest (Debian 12 cloud kernel 6.1, the stock virtio_blk driver) in QEMU 7.2 with
 * vhost-user-blk-pci on Kickplug's backend: the client nobody here wrote. The harness script installs what
 * is missing and builds the initramfs once (cached in target/realguest); each run boots QEMU under TCG
 * (KVM only with vmx/svm), runs fio on /dev/vda and reports on the serial console.
 *
 * <p>Checks per run: fio (randwrite with verify=crc32c, then randread) exits 0; the guest kernel log has no
 * virtio or I/O error; the md5 of the first 16 MiB the guest reads equals that of the backing image file.
 * Runs: one queue with EVENT_IDX (after killing a QEMU mid-I/O), two queues without EVENT_IDX followed by a
 * resize that the guest must see in /sys/block/vda/size (the back-end request channel), a polled run
 * (virtio_blk.poll_queues=1, io_uring hipri: a queue with no call descriptor), and queue-size=1024. The
 * back-end killed under a running guest is distribution's BackendCrashIT.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RealGuestIT {

    private static final Path MODULE = Path.of(System.getProperty("kickplug.module.dir", ".")).toAbsolutePath();
    private static final Path SCRIPT = MODULE.resolve("src/test/realguest/realguest.sh");
    private static final Path JOBS = MODULE.resolve("src/test/realguest/jobs");
    private static final Path CACHE = MODULE.resolve("target/realguest");
    private static final long IMAGE_BYTES = 64L << 20;
    private static final int SUM_MB = 16;
    private static final long RUN_SECONDS = 240;

    /** Log lines of the back-end request channel (java.util.logging, behind System.Logger). */
    private static final List<String> ACKS = Collections.synchronizedList(new ArrayList<>());
    private static final java.util.logging.Logger CHANNEL_LOG =
            java.util.logging.Logger.getLogger("io.kickplug.vhost.backend.BackendChannel");

    private static Path work;
    private static ExportedDisk disk;
    private static Path image;

    @BeforeAll
    static void prepareGuestAndExport() throws Exception {
        OutputProcess prepare = OutputProcess.start("realguest", List.of("bash", SCRIPT.toString(), "prepare", CACHE.toString()));
        prepare.finish(1200);
        if (prepare.exitCode != 0 || !prepare.has("RG-PREPARED")) {
            fail("the real-guest harness could not prepare (packages, kernel, initramfs); CI runs as root with apt:\n"
                    + prepare.text());
        }
        CHANNEL_LOG.setLevel(java.util.logging.Level.INFO);
        CHANNEL_LOG.addHandler(collecting(ACKS));
        // Short socket paths: sun_path holds 107 bytes.
        work = Files.createTempDirectory("kp-rg");
        image = work.resolve("disk.img");
        // Both ring bundles, as in the runtime: QEMU's packed=on (packedRing) gets the packed ring.
        disk = new ExportedDisk("rg", new ImageFileBackend(image, IMAGE_BYTES), 2, 2, work.resolve("vhost.sock"),
                io.kickplug.api.virtio.RingSelector.of(new io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent(),
                        new io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent()));
    }

    /** A log handler that adds every record's message to {@code messages}. */
    private static java.util.logging.Handler collecting(List<String> messages) {
        return new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                messages.add(r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
    }

    @AfterAll
    static void stopExport() throws Exception {
        if (disk != null) {
            disk.close();
        }
        if (work != null) {
            try (var s = Files.walk(work)) {
                s.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    @Order(1)
    void killingQemuMidIoLeavesTheBackendUpAndTheNextQemuVerifies() throws Exception {
        try (ExportedDisk neighbour = new ExportedDisk("neighbour", new MemoryBackend(1 << 20, false), 1, 1,
                work.resolve("n.sock"));
                FrontendClient other = neighbour.connect(work.resolve("n-ram"))) {
            other.negotiate(io.kickplug.api.virtio.VirtioFeatures.RING_EVENT_IDX);
            FrontendClient.Queue q = other.startQueue(0, 0, false);

            OutputProcess doomed = RealGuestOutput.boot("realguest", runCommand("long-randrw.fio", 2, "on", 0)).guest();
            assertTrue(doomed.awaitLine("RG-FIO-BEGIN", RUN_SECONDS), () -> "fio did not start:\n" + doomed.text());
            long kicksAtStart = disk.server.status().connection().kicks();
            awaitTrue(() -> disk.server.status().connection() != null
                    && disk.server.status().connection().kicks() > kicksAtStart + 200, 60,
                    "the guest keeps the queues busy");
            other.writeReadVerify(q, 0, (byte) 0x41, true); // the other disk serves while the guest runs
            // QEMU's vhost-user-blk negotiates inflight tracking (GET_INFLIGHT_FD / SET_INFLIGHT_FD) when offered.
            assertEquals(io.kickplug.vhost.protocol.VhostUser.PROTOCOL_F_INFLIGHT_SHMFD,
                    disk.server.status().connection().protocolFeatures()
                            & io.kickplug.vhost.protocol.VhostUser.PROTOCOL_F_INFLIGHT_SHMFD);
            assertEquals(0, disk.server.status().connection().refusals(), "QEMU's messages were all carried out");

            doomed.process.destroyForcibly(); // QEMU dies with requests in flight
            doomed.finish(30);
            assertTrue(disk.server.awaitNoFrontend(30, TimeUnit.SECONDS),
                    "the session ended: in-flight requests completed and the device was reset");
            other.writeReadVerify(q, 64, (byte) 0x42, true); // and still serves afterwards
        }
        OutputProcess next = runAndCheck("verify-libaio.fio", 1, "on", 0, 1);
        assertTrue(disk.server.status().sessions() >= 2);
        assertTrue(next.has("RG-QUEUES 1"));
    }

    @Test
    @Order(2)
    void twoQueuesWithoutEventIdxThenAResizeReachesTheGuest() throws Exception {
        long grown = IMAGE_BYTES + (16L << 20);
        OutputProcess g = runAndCheck("verify-libaio.fio", 2, "off", 0, 2, List.of("--wait-resize"), guest -> {
            // After fio the guest watches /sys/block/vda/size. The resize is kp:resize's path for an export
            // (DiskRegistry.resize: backend, then the exported device's capacityChanged), reaching QEMU as
            // BACKEND_CONFIG_CHANGE_MSG on the back-end request channel; QEMU re-reads the configuration
            // (GET_CONFIG) and gives the guest a configuration-change interrupt (VIRTIO 1.2 5.2.6.2).
            assertTrue(guest.awaitLine("RG-RESIZE-WAIT", RUN_SECONDS), () -> "no resize step:\n" + guest.text());
            assertTrue(guest.has("RG-RESIZE-WAIT size=" + IMAGE_BYTES / 512), guest::text);
            assertEquals(io.kickplug.vhost.protocol.VhostUser.PROTOCOL_F_BACKEND_REQ,
                    disk.server.status().connection().protocolFeatures()
                            & io.kickplug.vhost.protocol.VhostUser.PROTOCOL_F_BACKEND_REQ,
                    "QEMU negotiated the back-end request channel");
            disk.backend.resize(grown);
            disk.device.capacityChanged();
        });
        // QEMU acked REPLY_ACK, so the message asked for an answer; QEMU gives it after its GET_CONFIG.
        awaitTrue(() -> ACKS.stream().anyMatch(m -> m.contains("acknowledged configuration change")), 30,
                "QEMU acknowledges the configuration change on the back-end channel");
        assertTrue(g.has("2/0/0 default/read/poll queues"), g::text);
        assertTrue(g.has("RG-RESIZE-SEEN size=" + grown / 512), () -> "the guest saw no new capacity:\n" + g.text());
    }

    @Test
    @Order(3)
    void pollQueueWithoutCallDescriptor() throws Exception {
        OutputProcess g = runAndCheck("verify-iouring-hipri.fio", 2, "on", 1, 2);
        assertTrue(g.has("1/0/1 default/read/poll queues"), g::text);
    }

    /**
     * Issue 13: QEMU's queue-size=1024 (the export's disk has the in-process default of 256); the front-end sets
     * the ring size, any power of two up to 32768.
     */
    @Test
    @Order(4)
    void queueSize1024() throws Exception {
        OutputProcess g = runAndCheck("verify-libaio.fio", 1, "on", 0, 1, "--queue-size", "1024");
        assertTrue(g.has("queue_size=1024"), g::text);
    }

    /**
     * Issue 14: the packed virtqueue (VIRTIO 1.2 section 2.8) with a real driver: QEMU's {@code packed=on}, Linux's
     * virtio_ring packed code against Kickplug's packed device view. fio randwrite with verify then randread, no
     * I/O errors, and the guest negotiated VIRTIO_F_RING_PACKED (bit 34 of the sysfs features string).
     */
    @Test
    @Order(5)
    void packedRing() throws Exception {
        // QEMU's vhost-user-blk asks for the inflight area (INFLIGHT_SHMFD is offered): the packed rings run on
        // the area's packed layout (PackedInflightQueue), which says so at DEBUG.
        List<String> tracked = Collections.synchronizedList(new ArrayList<>());
        java.util.logging.Logger inflightLog =
                java.util.logging.Logger.getLogger("io.kickplug.vhost.backend.PackedInflightQueue");
        java.util.logging.Handler handler = collecting(tracked);
        handler.setLevel(java.util.logging.Level.FINE);
        inflightLog.setLevel(java.util.logging.Level.FINE);
        inflightLog.addHandler(handler);
        OutputProcess g;
        try {
            g = runAndCheck("verify-libaio.fio", 1, "on", 0, 1, "--packed", "on");
        } finally {
            inflightLog.removeHandler(handler);
            inflightLog.setLevel(null);
        }
        assertTrue(tracked.stream().anyMatch(m -> m.contains("tracked in the inflight area")),
                () -> "the packed rings ran without the packed inflight area: " + tracked);
        assertTrue(g.has("packed=on"), g::text);
        List<String> features = g.lines("RG-FEATURES ");
        assertEquals(1, features.size(), g::text);
        String bits = features.get(0).substring("RG-FEATURES ".length()).trim();
        assertTrue(bits.length() > 34 && bits.charAt(34) == '1', () -> "bit 34 not negotiated: " + bits);
    }

    // Harness.

    private static List<String> runCommand(String job, int queues, String eventIdx, int pollQueues,
            String... extra) {
        // One vCPU per queue (virtio_blk uses at most one queue per vCPU): a one-queue run boots one vCPU, so on a
        // busy host no second vCPU thread competes with it and no vCPU waits on a starved sibling at boot.
        List<String> command = new ArrayList<>(List.of("bash", SCRIPT.toString(), "run", CACHE.toString(),
                disk.server.socketPath().toString(), JOBS.resolve(job).toString(), "--queues",
                Integer.toString(queues), "--event-idx", eventIdx, "--poll-queues", Integer.toString(pollQueues),
                "--sum-mb", Integer.toString(SUM_MB), "--smp", Integer.toString(Math.max(1, queues))));
        command.addAll(List.of(extra));
        return command;
    }

    /** Something the test does while the guest runs. */
    @FunctionalInterface
    private interface During {
        void run(OutputProcess guest) throws Exception;
    }

    private static OutputProcess runAndCheck(String job, int queues, String eventIdx, int pollQueues, int expectedQueues,
            String... extra) throws Exception {
        return runAndCheck(job, queues, eventIdx, pollQueues, expectedQueues, List.of(extra), guest -> { });
    }

    private static OutputProcess runAndCheck(String job, int queues, String eventIdx, int pollQueues, int expectedQueues,
            List<String> extraOptions, During during) throws Exception {
        long sessionsBefore = disk.server.status().sessions();
        List<String> command = new ArrayList<>(runCommand(job, queues, eventIdx, pollQueues));
        command.addAll(extraOptions);
        RealGuestOutput.Boot boot = RealGuestOutput.boot("realguest", command);
        OutputProcess g = boot.guest();
        try {
            during.run(g);
        } catch (Throwable t) {
            g.process.destroyForcibly();
            throw t;
        }
        g.finish(RUN_SECONDS);
        RealGuestOutput.assertFinished(g, expectedQueues);
        assertTrue(disk.server.awaitNoFrontend(30, TimeUnit.SECONDS), "QEMU disconnected");
        assertEquals(sessionsBefore + boot.starts(), disk.server.status().sessions(),
                "one session per QEMU started (a guest that stalled at boot is started once more)");
        String guestSum = RealGuestOutput.guestSum(g);
        assertEquals(RealGuestOutput.md5(image, SUM_MB << 20), guestSum,
                "the backing image holds what the guest wrote (md5 of the first " + SUM_MB + " MiB)");
        return g;
    }

    /** Waits for a condition that another process makes true. */
    private static void awaitTrue(BooleanSupplier condition, long seconds, String what) {
        Await.await(condition, Duration.ofSeconds(seconds), "until " + what);
    }

}
