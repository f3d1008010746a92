package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.rbd.MicroCeph;
import io.kickplug.vhost.frontend.FrontendClient;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.io.File;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An RBD disk behind {@code kp:vhost}, driven the way {@code VhostBench --backends rbd} drives it: a
 * {@code kickplug.jar --daemon} on the test cluster ({@link MicroCeph}) serves two images over vhost-user, one as
 * attached and one with device-side polling ({@code kp:poll on}); a front-end in this JVM reaches them only through
 * the Unix socket and the shared guest memory ({@link FrontendClient}: one queue of 256, EVENT_IDX, a call
 * descriptor). On each export it writes a pattern to a set of sectors at queue depth 32 and reads every one back,
 * then runs {@code -Dkickplug.rbd.vhost.reads} (default 2000) 4 KiB random reads at depth 1 and as many at depth 32
 * as the benchmark's loop does (harvest, resubmit, kick when the device asks; sleep on the call descriptor only
 * after re-enabling callbacks found nothing). A request not completed within 10 s fails the test with the ring's
 * indices and the daemon's log: whether the device took it (avail_event) and whether it was ever pushed.
 */
@ExtendWith(MicroCeph.class)
class RbdVhostIT {

    private static final int READS = Integer.getInteger("kickplug.rbd.vhost.reads", 2000);
    private static final int QUEUE_SIZE = 256;
    private static final int BLOCK = 4096;
    private static final long IMAGE_BYTES = 64L << 20;
    private static final long WAIT_MS = 10_000;
    private static final Path JAR = LauncherJar.built();

    private Path work;
    private Process daemon;
    /** Used elements the front-end took on the current connection. */
    private long taken;
    private Path daemonErr;

    @AfterEach
    void stop() throws Exception {
        if (daemon != null) {
            daemon.destroy(); // SIGTERM, by the process handle
            if (!daemon.waitFor(60, TimeUnit.SECONDS)) {
                daemon.destroyForcibly();
            }
        }
        if (work != null) {
            RealGuestHarness.deleteTree(work);
        }
    }

    @Test
    void everyRequestThroughTheSocketCompletesAtDepthOneAndThirtyTwoWithAndWithoutPolling(MicroCeph ceph)
            throws Exception {
        work = Files.createTempDirectory(Path.of("/tmp"), "kp-rbdv"); // sun_path holds 107 bytes
        String prefix = "vh" + ProcessHandle.current().pid() + "-";
        List<String> statements = new ArrayList<>();
        for (String disk : List.of("plain", "polled")) {
            ceph.rbd("create", "--size", (IMAGE_BYTES >> 20) + "M", "rbd/" + prefix + disk);
            // Half the image written (objects the OSD holds), half never written (librbd answers from its map).
            ceph.rbd("bench", "--io-type", "write", "--io-size", "4M", "--io-total", (IMAGE_BYTES >> 21) + "M",
                    "rbd/" + prefix + disk);
            statements.add("kp:attach --backend rbd --pool rbd --image " + prefix + disk + " --conf " + ceph.conf()
                    + " " + disk);
            if (disk.equals("polled")) {
                statements.add("kp:poll " + disk + " on");
            }
            statements.add("kp:vhost " + disk + " --socket " + work.resolve(disk + ".sock") + " --queues 1");
        }
        Path script = Files.writeString(work.resolve("serve.gosh"), String.join("\n", statements) + "\n");
        List<String> command = LauncherJar.command(JAR, work);
        command.addAll(List.of("--daemon", "--state", "none", "--log-level", "info", "-f", script.toString()));
        daemonErr = work.resolve("daemon.err");
        daemon = new ProcessBuilder(command).directory(work.toFile())
                .redirectInput(Redirect.from(new File("/dev/null"))).redirectError(daemonErr.toFile()).start();
        DaemonStdout stdout = new DaemonStdout(daemon, "daemon");
        try {
            stdout.running.get(120, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("the daemon did not start: " + stdout.lines + "\n" + log(), e);
        }
        for (String disk : List.of("plain", "polled")) {
            Path memory = Files.isDirectory(Path.of("/dev/shm"))
                    ? Path.of("/dev/shm", work.getFileName() + "-" + disk + "-ram") : work.resolve(disk + "-ram");
            try (FrontendClient c = new FrontendClient(work.resolve(disk + ".sock"), memory, 16L << 20,
                    new VirtqueueFactoryComponent(), new GuestMemoryFactoryComponent())) {
                c.callReaders(true);
                taken = 0;
                c.negotiate(VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_SEG_MAX | VirtioBlk.F_BLK_SIZE,
                        VhostUser.PROTOCOL_F_REPLY_ACK | VhostUser.PROTOCOL_F_CONFIGURE_MEM_SLOTS);
                assertTrue((c.features() & VirtioFeatures.RING_EVENT_IDX) != 0, "the daemon offers EVENT_IDX");
                Queue q = c.startQueue(0, c.initialBase(), false, QUEUE_SIZE, 0);
                writeThenVerify(disk, c, q);
                long done1 = run(disk, c, q, 1, READS);
                long done32 = run(disk, c, q, 32, READS);
                System.out.printf("RbdVhostIT %s: %d reads at QD1, %d at QD32%n", disk, done1, done32);
            }
        }
        assertTrue(daemon.isAlive(), this::log);
    }

    /** 64 sectors 4 KiB apart written at depth 32 with a pattern each, then read back and compared. */
    private void writeThenVerify(String disk, FrontendClient c, Queue q) throws Exception {
        int blocks = 64;
        int depth = 32;
        for (int phase = 0; phase < 2; phase++) {
            int type = phase == 0 ? VirtioBlk.T_OUT : VirtioBlk.T_IN;
            for (int first = 0; first < blocks; first += depth) {
                for (int slot = 0; slot < depth; slot++) {
                    int block = first + slot;
                    byte[] data = new byte[BLOCK];
                    Arrays.fill(data, phase == 0 ? (byte) (block + 1) : 0);
                    c.memory.write(c.dataAddress(slot), data, 0, data.length);
                    c.submitNoKick(q, slot, type, sector(block), BLOCK);
                }
                q.kick();
                for (int n = 0; n < depth; n++) {
                    awaitUsed(disk, c, q, (phase == 0 ? "write " : "read ") + n + " of a batch");
                }
                for (int slot = 0; slot < depth; slot++) {
                    assertEquals(VirtioBlk.S_OK, c.status(slot), disk + " status of block " + (first + slot));
                    if (phase == 1) {
                        byte[] back = new byte[BLOCK];
                        c.memory.read(c.dataAddress(slot), back, 0, back.length);
                        byte[] want = new byte[BLOCK];
                        Arrays.fill(want, (byte) (first + slot + 1));
                        assertTrue(Arrays.equals(want, back), disk + ": block " + (first + slot) + " read back differs");
                    }
                }
            }
        }
    }

    /** Block {@code b}'s sector: spread over the image, 1 MiB apart. */
    private static long sector(int b) {
        return (long) b * (1 << 20) / 512;
    }

    /** A used buffer within {@link #WAIT_MS}, by the call notification as the benchmark waits for it. */
    private UsedBuffer awaitUsed(String disk, FrontendClient c, Queue q, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (true) {
            UsedBuffer u = q.driver.getUsed();
            if (u != null) {
                taken++;
                return u;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError(disk + ": " + what + " not completed within " + WAIT_MS + " ms; "
                        + ring(c, q) + "\n" + log());
            }
            if (!q.driver.enableCallbacks()) {
                q.driver.disableCallbacks();
                continue;
            }
            q.awaitInterrupt(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)), TimeUnit.MILLISECONDS);
            q.driver.disableCallbacks();
        }
    }

    /**
     * {@code total} 4 KiB random reads kept {@code depth} in flight, with VhostBench's loop: harvest every used
     * buffer, resubmit from its slot, kick when the device asks (EVENT_IDX), and only when nothing was harvested
     * re-enable callbacks and sleep until the call notification. Returns the reads completed.
     */
    private long run(String disk, FrontendClient c, Queue q, int depth, int total) throws Exception {
        SplittableRandom random = new SplittableRandom(depth);
        long sectors = IMAGE_BYTES / 512;
        @SuppressWarnings("unchecked")
        List<BufferSpec>[] chains = new List[depth];
        for (int slot = 0; slot < depth; slot++) {
            chains[slot] = c.chain(slot, VirtioBlk.T_IN, BLOCK);
        }
        q.driver.disableCallbacks();
        int submitted = 0;
        for (int slot = 0; slot < depth; slot++) {
            c.submitPrepared(q, slot, chains[slot], VirtioBlk.T_IN, random.nextLong(sectors / 8) * 8);
            submitted++;
        }
        if (q.driver.kickPrepare()) {
            q.kick();
        }
        long completed = 0;
        while (completed < total) {
            int harvested = 0;
            UsedBuffer u;
            while ((u = q.driver.getUsed()) != null) {
                int slot = (Integer) u.token();
                assertEquals(VirtioBlk.S_OK, c.status(slot), disk + " QD" + depth + " read " + completed);
                completed++;
                harvested++;
                taken++;
                if (submitted < total) {
                    c.submitPrepared(q, slot, chains[slot], VirtioBlk.T_IN, random.nextLong(sectors / 8) * 8);
                    submitted++;
                }
            }
            if (harvested > 0 && q.driver.kickPrepare()) {
                q.kick();
            }
            if (harvested == 0 && completed < total) {
                if (!q.driver.enableCallbacks()) {
                    q.driver.disableCallbacks();
                    continue;
                }
                if (!q.awaitInterrupt(WAIT_MS, TimeUnit.MILLISECONDS)) {
                    // As the benchmark stops: no call notification within the wait. The ring says whether the device
                    // pushed the request (used.idx past what the driver took) or never completed it.
                    throw new AssertionError(disk + ": no completion within " + WAIT_MS + " ms at QD" + depth + " after "
                            + completed + " of " + total + " reads (" + submitted + " submitted, " + taken
                            + " used elements taken on this connection); " + ring(c, q) + "\n" + log());
                }
                q.driver.disableCallbacks();
            }
        }
        return completed;
    }

    /** The split ring's indices as the front-end sees them (VIRTIO 1.2 sections 2.7.6, 2.7.8, 2.7.10). */
    private static String ring(FrontendClient c, Queue q) {
        var layout = c.layout(q.index);
        int size = layout.size();
        return String.format("avail.idx %d, avail_event %d, used.idx %d, used_event %d, in flight %d",
                c.memory.readU16(layout.availRing() + 2) & 0xffff,
                c.memory.readU16(layout.usedRing() + 4 + 8L * size) & 0xffff,
                c.memory.readU16(layout.usedRing() + 2) & 0xffff,
                c.memory.readU16(layout.availRing() + 4 + 2L * size) & 0xffff, q.driver.inFlight());
    }

    private String log() {
        try {
            return "--- daemon stderr\n" + Files.readString(daemonErr);
        } catch (Exception e) {
            return "(no daemon log: " + e + ")";
        }
    }
}
