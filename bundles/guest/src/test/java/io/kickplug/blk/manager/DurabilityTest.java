package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.blk.testkit.InProcessHost;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.blk.backend.StableStorageFiles;
import io.kickplug.guest.virtio.RawRingGuest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Section 5.2.6.2 (a completed FLUSH makes completed writes durable), through the real virtio-mmio
 * transport and a file-backed disk, in two ways:
 *
 * <ul>
 * <li>{@link #aCompletedFlushHasFdatasyncedEveryWriteCompletedBeforeIt}: the image's channel keeps what a
 * power loss would leave (its content as of the last fdatasync); after every completed FLUSH every block
 * written before it must be there. A FLUSH that does nothing, or that completes before its fdatasync,
 * fails this test.</li>
 * <li>{@link #everyFlushedBlockSurvivesSigkill}: a child JVM writes and flushes and is killed with SIGKILL
 * while it keeps writing; every block a completed flush covered must be in the image file. A SIGKILL ends
 * the process, not the kernel, whose page cache keeps the writes: this shows only that nothing was left in
 * a user-space buffer of the JVM, and passes for a FLUSH that does nothing.</li>
 * </ul>
 */
class DurabilityTest {

    private static final int BLOCKS = 2048; // an 8 MiB image

    @Test
    void aCompletedFlushHasFdatasyncedEveryWriteCompletedBeforeIt() throws Exception {
        Files.createDirectories(Path.of("target"));
        Path image = Files.createTempFile(Path.of("target"), "stable-", ".img");
        int blocks = 128; // 512 KiB
        Files.write(image, new byte[blocks * DurabilityChild.BLOCK]);
        StableStorageFiles files = new StableStorageFiles();
        DiskRegistry registry = InProcessHost.registry(() -> List.of(files));
        try {
            registry.attach(DiskSpec.file("stable", image.toString(), false).withQueues(1, 64));
            RawRingGuest guest = new RawRingGuest(registry.port("stable")).init(-1L, 1, 64);
            assertTrue((guest.features() & VirtioBlk.F_FLUSH) != 0, "FLUSH negotiated: the write cache is on");
            Duration timeout = Duration.ofSeconds(20);
            int flushes = 0;
            for (int written = 0; written < blocks; ) {
                int end = Math.min(blocks, written + DurabilityChild.BATCH);
                for (int b = written; b < end; b++) {
                    assertEquals(VirtioBlk.S_OK, guest.request(0, VirtioBlk.T_OUT, (long) b * DurabilityChild.BLOCK
                            / 512, DurabilityChild.pattern(b), 0, timeout).status(), "write " + b);
                }
                written = end;
                assertEquals(VirtioBlk.S_OK, guest.request(0, VirtioBlk.T_FLUSH, 0, null, 0, timeout).status());
                flushes++;
                assertTrue(files.dataForces() >= flushes, "fdatasync calls " + files.dataForces() + " after "
                        + flushes + " completed FLUSH requests");
                byte[] stable = files.stable();
                for (int b = 0; b < written; b++) {
                    int from = b * DurabilityChild.BLOCK;
                    assertTrue(stable.length >= from + DurabilityChild.BLOCK, "block " + b + " is on stable storage");
                    assertArrayEquals(DurabilityChild.pattern(b), Arrays.copyOfRange(stable, from,
                            from + DurabilityChild.BLOCK), "block " + b + " is on stable storage after FLUSH " + flushes);
                }
            }
        } finally {
            registry.close();
            Files.deleteIfExists(image);
        }
    }

    @Test
    void everyFlushedBlockSurvivesSigkill() throws Exception {
        Files.createDirectories(Path.of("target"));
        Path image = Files.createTempFile(Path.of("target"), "durable-", ".img");
        Path log = Path.of("target", image.getFileName() + ".child.log");
        try (FileChannel channel = FileChannel.open(image, StandardOpenOption.WRITE)) {
            channel.truncate(0);
            channel.write(ByteBuffer.allocate(1), (long) BLOCKS * DurabilityChild.BLOCK - 1);
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                DurabilityChild.class.getName(), image.toString())
                .redirectError(log.toFile()).start();
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("READ-ERROR " + e);
            }
            lines.add("EOF");
        }, "durability-child-stdout");
        reader.setDaemon(true);
        reader.start();

        int flushed = 0;
        List<String> seen = new ArrayList<>();
        try {
            // Wait for a few completed flushes, then kill the child while it writes the next batch.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (flushed < 5 * DurabilityChild.BATCH) {
                String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) {
                    throw new AssertionError("the child reported no flush in time; output " + seen + ", log "
                            + Files.readString(log));
                }
                seen.add(line);
                if (!line.startsWith("FLUSHED ")) {
                    throw new AssertionError("unexpected child output " + seen + ", log " + Files.readString(log));
                }
                flushed = Integer.parseInt(line.substring("FLUSHED ".length()));
            }
        } finally {
            child.destroyForcibly(); // SIGKILL on Linux
            assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child did not die");
        }
        // Lines printed before the kill may still be queued: they count too.
        reader.join(TimeUnit.SECONDS.toMillis(10));
        for (String line = lines.poll(); line != null; line = lines.poll()) {
            if (line.startsWith("FLUSHED ")) {
                flushed = Math.max(flushed, Integer.parseInt(line.substring("FLUSHED ".length())));
            }
        }
        byte[] content = Files.readAllBytes(image);
        for (int b = 0; b < flushed; b++) {
            int from = b * DurabilityChild.BLOCK;
            assertArrayEquals(DurabilityChild.pattern(b),
                    Arrays.copyOfRange(content, from, from + DurabilityChild.BLOCK), "block " + b);
        }
        assertTrue(flushed >= 5 * DurabilityChild.BATCH);
        Files.deleteIfExists(log);
        Files.deleteIfExists(image);
    }
}
