package io.kickplug.guest.bench;

import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.blk.backend.NullBackend;
import io.kickplug.blk.device.QueueMapping;
import io.kickplug.blk.device.VirtioBlkDevice;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.blk.device.BlkDeviceSpec;
import io.kickplug.guest.engine.GuestBuffer;
import io.kickplug.guest.engine.GuestJob;
import io.kickplug.guest.engine.GuestMachine;
import io.kickplug.guest.engine.IoOp;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.guest.engine.Vcpu;
import io.kickplug.virtio.transport.MmioTransport;
import io.kickplug.virtio.iothread.EventLoopThread;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Seed 004's experiment in process: randread 4 KiB on a null-backend virtio-blk disk with 8 queues on 4
 * I/O threads, through the real MMIO transport and split rings, once per tracked-requests lock kind. The
 * guest is the guest engine (the same driver as {@code kp:fio}): one vCPU per queue keeps {@code iodepth}
 * requests in flight on its queue, with no exit or injection cost. Not a test (no {@code Test} suffix, so
 * {@code mvn verify} never runs it); from the repository root:
 * <pre>
 * mvn -B -o -q -pl bundles/guest -am test-compile dependency:build-classpath -Dmdep.outputFile=target/bench.cp \
 *     -Dmdep.includeScope=test
 * java -cp bundles/guest/target/test-classes:bundles/guest/target/classes:$(cat bundles/guest/target/bench.cp) \
 *     io.kickplug.guest.bench.TrackedLockBench seconds=5
 * </pre>
 *
 * <p>Arguments (all optional, {@code key=value}): {@code seconds=5 warmup=1 iodepth=64 queues=8 iothreads=4
 * kinds=yielding,mutex,sharded}.
 */
public final class TrackedLockBench {

    private static final long DISK = 1L << 30;
    private static final int BLOCK = 4096;
    private static final int QUEUE_SIZE = 256;

    private TrackedLockBench() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new HashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("expected key=value, got '" + a + "'");
            }
            opts.put(a.substring(0, eq), a.substring(eq + 1));
        }
        double seconds = Double.parseDouble(opts.getOrDefault("seconds", "5"));
        double warmup = Double.parseDouble(opts.getOrDefault("warmup", "1"));
        int iodepth = Integer.parseInt(opts.getOrDefault("iodepth", "64"));
        int queues = Integer.parseInt(opts.getOrDefault("queues", "8"));
        int ioThreads = Integer.parseInt(opts.getOrDefault("iothreads", "4"));
        List<TrackedLockKind> kinds = new ArrayList<>();
        for (String k : opts.getOrDefault("kinds", "yielding,mutex,sharded").split(",")) {
            kinds.add(TrackedLockKind.parse(k));
        }
        if (iodepth > QUEUE_SIZE) {
            throw new IllegalArgumentException("iodepth " + iodepth + " exceeds the queue size " + QUEUE_SIZE);
        }
        System.out.printf(Locale.ROOT, "randread %d KiB, null backend, %d queues on %d I/O threads, %d vCPUs, "
                + "iodepth %d per queue, %.1f s warm-up + %.1f s per kind, %d CPUs%n", BLOCK / 1024, queues, ioThreads,
                queues, iodepth, warmup, seconds, Runtime.getRuntime().availableProcessors());
        System.out.println("kind       IOPS      lock acquisitions  contended  wait ms  max hold us"
                + "   (all over the measured seconds, warm-up excluded)");
        for (TrackedLockKind kind : kinds) {
            Result r = run(kind, queues, ioThreads, iodepth, warmup, seconds);
            System.out.printf(Locale.ROOT, "%-9s %9.0f  %17d  %9d  %7.1f  %11.1f%n", kind.label(), r.iops,
                    r.lock.acquisitions(), r.lock.contentions(), r.lock.waittimeTotalNs() / 1e6,
                    r.lock.holdtimeMaxNs() / 1e3);
        }
    }

    private record Result(double iops, LockDelta lock) {
    }

    /** What the lock did during the measured interval. */
    private record LockDelta(long acquisitions, long contentions, long waittimeTotalNs, long holdtimeMaxNs) {
    }

    /** Random 4 KiB reads, {@code depth} in flight, until {@code stop}. */
    private static final class RandRead implements GuestJob {
        private final int depth;
        private final AtomicBoolean stop;
        private final AtomicBoolean failed;
        private final LongAdder completed;
        private final Random sectors;
        private final ArrayDeque<GuestBuffer> free = new ArrayDeque<>();

        RandRead(int depth, long seed, AtomicBoolean stop, AtomicBoolean failed, LongAdder completed) {
            this.depth = depth;
            this.stop = stop;
            this.failed = failed;
            this.completed = completed;
            this.sectors = new Random(seed);
        }

        @Override
        public void start(Vcpu v) {
            v.allocateBuffers(depth, BLOCK, free);
        }

        @Override
        public boolean step(Vcpu v) {
            boolean any = false;
            while (!stop.get() && !free.isEmpty()) {
                GuestBuffer buf = free.poll();
                long offset = (long) sectors.nextInt((int) (DISK / BLOCK)) * BLOCK;
                v.submit(IoOp.READ, offset, BLOCK, buf, false, (status, at) -> {
                    if (status != VirtioBlk.S_OK) {
                        failed.set(true);
                    }
                    completed.increment();
                    free.add(buf);
                });
                any = true;
            }
            if (any) {
                v.commit();
            }
            return !stop.get();
        }

        @Override
        public void finish(Vcpu v) {
        }
    }

    private static Result run(TrackedLockKind kind, int queues, int ioThreadCount, int iodepth, double warmup,
            double seconds) throws Exception {
        List<IoThread> threads = new ArrayList<>();
        for (int i = 0; i < ioThreadCount; i++) {
            threads.add(new EventLoopThread("bench-io" + i));
        }
        VirtioBlkDevice device = new VirtioBlkDevice(BlkDeviceSpec.of("bench", new NullBackend(DISK, false), false,
                queues, QUEUE_SIZE, new byte[0], threads).withMapping(QueueMapping.of(List.of(), queues, ioThreadCount))
                .withTrackedLock(kind).withWorkers(1));
        long memory = (16L << 20) + (long) queues * iodepth * (BLOCK + 64) + (long) queues * QUEUE_SIZE * 64;
        VirtqueueFactoryComponent rings = new VirtqueueFactoryComponent();
        MmioTransport transport = new MmioTransport(device, OffHeapGuestMemory.allocate(memory), rings);
        MachineConfig config = MachineConfig.defaults("bench").withVcpus(queues).withMaxQueues(queues)
                .withLatencies(0, 0).withQueueDepth(iodepth);
        try (GuestMachine guest = StandardGuestEngine.standalone().boot(transport.port(), rings, config)) {
            LongAdder completed = new LongAdder();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicBoolean failed = new AtomicBoolean();
            List<GuestJob> jobs = new ArrayList<>();
            for (int q = 0; q < guest.numQueues(); q++) {
                jobs.add(new RandRead(iodepth, q + 1000L, stop, failed, completed));
            }
            CompletableFuture<Void> running = CompletableFuture.runAsync(
                    () -> guest.runJobs(jobs, Duration.ofDays(1)));
            pause(warmup);
            // Every column covers the measured seconds only: the counters by difference, the max hold by
            // starting it afresh here (a max cannot be differenced).
            device.trackedRequests().stats(kind).reset();
            LockStatRow before = device.trackedRequests().stats(kind).row("");
            long c0 = completed.sum();
            long t0 = System.nanoTime();
            pause(seconds);
            long c1 = completed.sum();
            long t1 = System.nanoTime();
            LockStatRow after = device.trackedRequests().stats(kind).row("");
            stop.set(true);
            running.get();
            if (failed.get()) {
                throw new IllegalStateException("a request did not complete with VIRTIO_BLK_S_OK");
            }
            return new Result((c1 - c0) / ((t1 - t0) / 1e9), new LockDelta(
                    after.acquisitions() - before.acquisitions(), after.contentions() - before.contentions(),
                    after.waittimeTotalNs() - before.waittimeTotalNs(), after.holdtimeMaxNs()));
        } finally {
            transport.close();
            device.close();
            threads.forEach(IoThread::close);
        }
    }

    /** Waits {@code seconds} of wall time (a benchmark phase, not a test). */
    private static void pause(double seconds) throws InterruptedException {
        Thread.sleep((long) (seconds * 1000));
    }
}
