package io.kickplug.guest.workload;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.blk.BlkDriverConfig;
import io.kickplug.guest.blk.BlkRequest;
import io.kickplug.guest.blk.VirtioBlkDriver;
import io.kickplug.guest.driver.GuestDriverException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Objects;

/**
 * One write-then-read-verify pass on one vCPU thread (the caller's): boot the driver, write every block
 * with its pattern keeping {@code queueDepth} requests in flight (spread round-robin over the queues),
 * flush when the device offers it, read everything back and compare, then reset the device.
 */
public final class WriteReadVerifyPass {

    private final String disk;
    private final GuestPort port;
    private final VirtqueueFactory factory;
    private final IoPassOptions options;
    private final BlockPattern pattern;
    private final Duration timeout;

    public WriteReadVerifyPass(String disk, GuestPort port, VirtqueueFactory factory, IoPassOptions options,
            long seed, Duration timeout) {
        this.disk = Objects.requireNonNull(disk, "disk");
        this.port = Objects.requireNonNull(port, "port");
        this.factory = Objects.requireNonNull(factory, "factory");
        this.options = Objects.requireNonNull(options, "options");
        this.pattern = new BlockPattern(seed);
        this.timeout = Objects.requireNonNull(timeout, "timeout");
    }

    /** Checks what can be checked before the device is touched. */
    public static void validate(IoPassOptions options) {
        if (options.blockSize() <= 0 || options.blockSize() % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IllegalArgumentException("block size " + options.blockSize()
                    + " must be a positive multiple of 512 (VIRTIO 1.2 section 5.2.6.1)");
        }
        if (options.queueDepth() < 1) {
            throw new IllegalArgumentException("queue depth " + options.queueDepth() + " must be at least 1");
        }
        if (options.totalBytes() < 0 || options.totalBytes() % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IllegalArgumentException("total size " + options.totalBytes()
                    + " must be a multiple of 512 (0 for the whole disk)");
        }
    }

    public IoPassResult run() {
        validate(options);
        BlkDriverConfig config = new BlkDriverConfig(BlkDriverConfig.SUPPORTED_FEATURES, Integer.MAX_VALUE,
                options.queueDepth(), options.blockSize(), timeout);
        try (VirtioBlkDriver driver = VirtioBlkDriver.boot(port, factory, config)) {
            if (options.queueDepth() > driver.queueSize(0)) {
                throw new IllegalArgumentException("queue depth " + options.queueDepth() + " exceeds the queue size "
                        + driver.queueSize(0) + " of disk '" + disk + "'");
            }
            if (driver.readOnly()) {
                throw new IllegalArgumentException("disk '" + disk + "' is read-only (VIRTIO_BLK_F_RO); a write pass"
                        + " would destroy nothing but cannot run");
            }
            long sectors = driver.capacitySectors();
            long capacity = sectors > Long.MAX_VALUE / VirtioBlk.SECTOR_SIZE ? Long.MAX_VALUE
                    : sectors * VirtioBlk.SECTOR_SIZE;
            long total = options.totalBytes() == 0 ? capacity : options.totalBytes();
            if (total == 0) {
                throw new IllegalArgumentException("disk '" + disk + "' has a capacity of 0 bytes");
            }
            if (total > capacity) {
                throw new IllegalArgumentException("total size " + total + " exceeds the capacity " + capacity
                        + " bytes of disk '" + disk + "'");
            }
            Phase phase = new Phase(driver, total);
            long start = System.nanoTime();
            phase.run(true);
            if (driver.hasFlush()) {
                flush(driver);
            }
            long mismatches = phase.run(false);
            long elapsed = System.nanoTime() - start;
            return new IoPassResult(disk, 2 * phase.blocks, 2 * total, elapsed, mismatches, driver.interrupts(),
                    driver.notifies());
        }
    }

    private static void flush(VirtioBlkDriver driver) {
        BlkRequest flush = BlkRequest.flush(null);
        if (!driver.trySubmit(0, flush)) {
            throw new IllegalStateException("queue 0 has no free slot for a flush with nothing in flight");
        }
        driver.awaitCompletions(WriteReadVerifyPass::requireOk);
    }

    private static void requireOk(BlkRequest request) {
        if (!request.ok()) {
            String why = request.status() == BlkRequest.DRIVER_FAILED ? request.error()
                    : "status " + BlkRequest.statusName(request.status());
            throw new GuestDriverException(request.describe() + " failed: " + why);
        }
    }

    /** One direction over all blocks. */
    private final class Phase {
        final VirtioBlkDriver driver;
        final long total;
        final long blocks;
        final byte[] scratch;
        long mismatches;

        Phase(VirtioBlkDriver driver, long total) {
            this.driver = driver;
            this.total = total;
            this.blocks = (total + options.blockSize() - 1) / options.blockSize();
            this.scratch = new byte[options.blockSize()];
        }

        long run(boolean write) {
            mismatches = 0;
            int depth = options.queueDepth();
            int bs = options.blockSize();
            ArrayDeque<byte[]> buffers = new ArrayDeque<>(depth);
            for (int i = 0; i < depth; i++) {
                buffers.add(new byte[bs]);
            }
            int queues = driver.queueCount();
            int nextQueue = 0;
            long next = 0;
            int inFlight = 0;
            while (next < blocks || inFlight > 0) {
                while (next < blocks && inFlight < depth) {
                    byte[] buffer = buffers.poll();
                    long offset = next * bs;
                    int length = (int) Math.min(bs, total - offset);
                    long sector = offset / VirtioBlk.SECTOR_SIZE;
                    BlkRequest request;
                    if (write) {
                        pattern.fill(next, buffer, length);
                        request = BlkRequest.write(sector, buffer, length, next);
                    } else {
                        request = BlkRequest.read(sector, buffer, length, next);
                    }
                    boolean submitted = false;
                    for (int i = 0; i < queues && !submitted; i++) {
                        submitted = driver.trySubmit((nextQueue + i) % queues, request);
                    }
                    nextQueue = (nextQueue + 1) % queues;
                    if (!submitted) {
                        buffers.push(buffer);
                        if (inFlight == 0) {
                            throw new GuestDriverException("no queue accepts a request while none is in flight: "
                                    + "queue size " + driver.queueSize(0) + " is too small for a 3-descriptor chain");
                        }
                        break;
                    }
                    next++;
                    inFlight++;
                }
                if (inFlight > 0) {
                    inFlight -= driver.awaitCompletions(request -> {
                        requireOk(request);
                        if (!write && !pattern.matches((Long) request.tag(), request.buffer(), request.length(),
                                scratch)) {
                            mismatches++;
                        }
                        buffers.push(request.buffer());
                    });
                }
            }
            return mismatches;
        }
    }
}
