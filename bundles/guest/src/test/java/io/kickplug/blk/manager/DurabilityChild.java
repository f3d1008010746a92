package io.kickplug.blk.manager;

import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.blk.testkit.InProcessHost;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Random;

/**
 * The child JVM of {@link DurabilityTest}: attaches a file-backed disk through {@link DiskRegistry} with the
 * real virtio-transport classes, and, as a guest on virtio-mmio, writes distinct 4 KiB blocks in batches.
 * After each batch it sends a FLUSH and, once the FLUSH completed OK, prints {@code FLUSHED <n>}: blocks
 * {@code 0..n-1} are covered by a completed flush. Then it keeps writing until the parent kills it (or
 * it has filled the disk and waited a minute).
 */
public final class DurabilityChild {

    static final int BLOCK = 4096;
    static final int BATCH = 16;
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private DurabilityChild() {
    }

    /** The content of block {@code index}: its index, then bytes from a generator seeded by it. */
    static byte[] pattern(int index) {
        byte[] block = new byte[BLOCK];
        new Random(index * 1_000_003L + 17).nextBytes(block);
        ByteBuffer.wrap(block).putLong(index);
        return block;
    }

    public static void main(String[] args) throws Exception {
        String image = args[0];
        DiskRegistry registry = InProcessHost.registry();
        registry.attach(DiskSpec.file("durable", image, false).withQueues(1, 64));
        RawRingGuest guest = new RawRingGuest(registry.port("durable")).init(-1L, 1, 64);
        if ((guest.features() & VirtioBlk.F_FLUSH) == 0) {
            throw new IllegalStateException("FLUSH was not negotiated");
        }
        int blocks = (int) (registry.info("durable").sizeBytes() / BLOCK);
        int written = 0;
        while (written < blocks) {
            int end = Math.min(blocks, written + BATCH);
            for (int b = written; b < end; b++) {
                check(guest.request(0, VirtioBlk.T_OUT, (long) b * BLOCK / 512, pattern(b), 0, TIMEOUT), "write " + b);
            }
            written = end;
            check(guest.request(0, VirtioBlk.T_FLUSH, 0, null, 0, TIMEOUT), "flush");
            System.out.println("FLUSHED " + written);
            System.out.flush();
        }
        System.out.println("FULL");
        System.out.flush();
        Thread.sleep(60_000); // the parent kills us long before
        System.exit(3);
    }

    private static void check(RawRingGuest.Completed completed, String what) {
        if (completed.status() != VirtioBlk.S_OK) {
            System.out.println("FAILED " + what + " status " + completed.status());
            System.out.flush();
            System.exit(2);
        }
    }
}
