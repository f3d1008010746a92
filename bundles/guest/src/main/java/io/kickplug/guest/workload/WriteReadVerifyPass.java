package io.kickplug.guest.workload;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.engine.GuestEngine;
import io.kickplug.guest.engine.GuestJob;
import io.kickplug.guest.engine.GuestMachine;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.RunResult;
import io.kickplug.guest.engine.StandardGuestEngine;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One write-then-read-verify pass ({@code kp:io}) as jobs of the guest engine: boot a machine on the disk, write
 * every block with its pattern keeping {@code queueDepth} requests in flight (one job per queue the device
 * offers, the depth and the blocks spread over them), flush when the device offers it, read everything back
 * and compare, then reset the device. The machine has no exit or injection cost: the pass measures the device.
 */
public final class WriteReadVerifyPass {
    /** Most vCPUs (so queues) a pass uses. */
    static final int MAX_VCPUS = 8;

    private final String disk;
    private final GuestPort port;
    private final VirtqueueFactory factory;
    private final GuestEngine engine;
    private final IoPassOptions options;
    private final BlockPattern pattern;
    private final Duration timeout;

    public WriteReadVerifyPass(String disk, GuestPort port, VirtqueueFactory factory, IoPassOptions options,
            long seed, Duration timeout) {
        this(disk, port, factory, StandardGuestEngine.standalone(), options, seed, timeout);
    }

    public WriteReadVerifyPass(String disk, GuestPort port, VirtqueueFactory factory, GuestEngine engine,
            IoPassOptions options, long seed, Duration timeout) {
        this.disk = Objects.requireNonNull(disk, "disk");
        this.port = Objects.requireNonNull(port, "port");
        this.factory = Objects.requireNonNull(factory, "factory");
        this.engine = Objects.requireNonNull(engine, "engine");
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
        // Slots per queue = the queue size (depth 0), so that a depth above it is refused below, not capped.
        MachineConfig config = MachineConfig.defaults(disk).withVcpus(Math.min(options.queueDepth(), MAX_VCPUS))
                .withLatencies(0, 0).withQueueDepth(0).withTimeout(timeout);
        try (GuestMachine machine = engine.boot(port, factory, config)) {
            if (options.queueDepth() > machine.queueDepth(0)) {
                throw new IllegalArgumentException("queue depth " + options.queueDepth() + " exceeds the queue size "
                        + machine.queueDepth(0) + " of disk '" + disk + "'");
            }
            if (machine.readOnly()) {
                throw new IllegalArgumentException("disk '" + disk + "' is read-only (VIRTIO_BLK_F_RO); a write pass"
                        + " would destroy nothing but cannot run");
            }
            long capacity = machine.capacityBytes();
            long total = options.totalBytes() == 0 ? capacity : options.totalBytes();
            if (total == 0) {
                throw new IllegalArgumentException("disk '" + disk + "' has a capacity of 0 bytes");
            }
            if (total > capacity) {
                throw new IllegalArgumentException("total size " + total + " exceeds the capacity " + capacity
                        + " bytes of disk '" + disk + "'");
            }
            // vCPU q submits to queue q: one job per queue in use, at most one per request in flight.
            int jobs = Math.min(machine.numQueues(), options.queueDepth());
            // Each wait of the machine is bounded by the timeout; the run as a whole only by progress.
            Duration runBound = timeout.multipliedBy(100);
            long start = System.nanoTime();
            List<WriteReadVerifyJob> writes = phase(true, total, jobs);
            RunResult w = machine.runJobs(List.copyOf(writes), runBound);
            long interrupts = w.interrupts();
            long notifies = w.notifies();
            if (machine.hasFlush()) {
                RunResult f = machine.runJobs(List.<GuestJob>of(new WriteReadVerifyJob.Flush()), runBound);
                interrupts += f.interrupts();
                notifies += f.notifies();
            }
            List<WriteReadVerifyJob> reads = phase(false, total, jobs);
            RunResult r = machine.runJobs(List.copyOf(reads), runBound);
            long elapsed = System.nanoTime() - start;
            long requests = 0;
            long mismatches = 0;
            for (WriteReadVerifyJob j : writes) {
                requests += j.completed();
            }
            for (WriteReadVerifyJob j : reads) {
                requests += j.completed();
                mismatches += j.mismatches();
            }
            return new IoPassResult(disk, requests, 2 * total, elapsed, mismatches, interrupts + r.interrupts(),
                    notifies + r.notifies());
        }
    }

    /** The jobs of one direction: job k takes blocks k, k + jobs, ... and its share of the depth. */
    private List<WriteReadVerifyJob> phase(boolean write, long total, int jobs) {
        List<WriteReadVerifyJob> list = new ArrayList<>();
        int depth = options.queueDepth();
        for (int k = 0; k < jobs; k++) {
            int share = depth / jobs + (k < depth % jobs ? 1 : 0);
            list.add(new WriteReadVerifyJob(pattern, write, options.blockSize(), total, k, jobs, share));
        }
        return list;
    }
}
