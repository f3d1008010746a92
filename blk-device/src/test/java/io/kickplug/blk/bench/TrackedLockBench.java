package io.kickplug.blk.bench;

import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.blk.device.BlkDeviceSpec;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import static io.kickplug.api.virtio.BufferSpec.readable;
import static io.kickplug.api.virtio.BufferSpec.writable;

import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.blk.backend.NullBackend;
import io.kickplug.blk.device.QueueMapping;
import io.kickplug.blk.device.VirtioBlkDevice;
import io.kickplug.blk.fake.MmioBlkGuest;
import io.kickplug.virtio.transport.MmioTransport;
import io.kickplug.virtio.iothread.EventLoopThread;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Seed 004's experiment in process: randread 4 KiB on a null-backend virtio-blk disk with 8 queues on 4
 * I/O threads, through the real MMIO transport and split rings, once per tracked-requests lock kind.
 * Driver threads each own some queues and keep {@code iodepth} requests in flight on each (polling the
 * used rings, kicking when the ring asks for it). Not a test (no {@code Test} suffix, so {@code mvn verify}
 * never runs it); from the repository root:
 * <pre>
 * mvn -B -o -q -pl blk-device -am install -DskipTests
 * mvn -B -o -q -pl blk-device dependency:build-classpath -Dmdep.outputFile=target/bench.cp -Dmdep.includeScope=test
 * java -cp blk-device/target/test-classes:blk-device/target/classes:$(cat blk-device/target/bench.cp) \
 *     io.kickplug.blk.bench.TrackedLockBench seconds=5
 * </pre>
 *
 * <p>Arguments (all optional, {@code key=value}): {@code seconds=5 warmup=1 drivers=2 iodepth=64
 * queues=8 iothreads=4 kinds=yielding,mutex,sharded}.
 */
public final class TrackedLockBench {

    private static final long DISK = 1L << 30;
    private static final int BLOCK = 4096;
    private static final int QUEUE_SIZE = 256;

    private TrackedLockBench() {
    }

    public static void main(String[] args) throws Exception {
        java.util.Map<String, String> opts = new java.util.HashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("expected key=value, got '" + a + "'");
            }
            opts.put(a.substring(0, eq), a.substring(eq + 1));
        }
        double seconds = Double.parseDouble(opts.getOrDefault("seconds", "5"));
        double warmup = Double.parseDouble(opts.getOrDefault("warmup", "1"));
        int drivers = Integer.parseInt(opts.getOrDefault("drivers", "2"));
        int iodepth = Integer.parseInt(opts.getOrDefault("iodepth", "64"));
        int queues = Integer.parseInt(opts.getOrDefault("queues", "8"));
        int ioThreads = Integer.parseInt(opts.getOrDefault("iothreads", "4"));
        List<TrackedLockKind> kinds = new ArrayList<>();
        for (String k : opts.getOrDefault("kinds", "yielding,mutex,sharded").split(",")) {
            kinds.add(TrackedLockKind.parse(k));
        }
        if (iodepth * 3 > QUEUE_SIZE) {
            throw new IllegalArgumentException("iodepth " + iodepth + " needs more than " + QUEUE_SIZE + " descriptors");
        }
        System.out.printf(Locale.ROOT, "randread %d KiB, null backend, %d queues on %d I/O threads, %d driver threads, "
                + "iodepth %d per queue, %.1f s warm-up + %.1f s per kind, %d CPUs%n", BLOCK / 1024, queues, ioThreads,
                drivers, iodepth, warmup, seconds, Runtime.getRuntime().availableProcessors());
        System.out.println("kind       IOPS      lock acquisitions  contended  wait ms  max hold us"
                + "   (all over the measured seconds, warm-up excluded)");
        for (TrackedLockKind kind : kinds) {
            Result r = run(kind, queues, ioThreads, drivers, iodepth, warmup, seconds);
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

    /** One request slot: its chain's index, status byte, and header (whose sector is redrawn per request). */
    private record Slot(int index, long status, long header) {
    }

    private static Result run(TrackedLockKind kind, int queues, int ioThreadCount, int drivers, int iodepth,
            double warmup, double seconds) throws Exception {
        List<IoThread> threads = new ArrayList<>();
        for (int i = 0; i < ioThreadCount; i++) {
            threads.add(new EventLoopThread("bench-io" + i));
        }
        VirtioBlkDevice device = new VirtioBlkDevice(BlkDeviceSpec.of("bench", new NullBackend(DISK, false), false,
                queues, QUEUE_SIZE, new byte[0], threads).withMapping(QueueMapping.of(List.of(), queues, ioThreadCount))
                .withTrackedLock(kind).withWorkers(1));
        long memory = (16L << 20) + (long) queues * iodepth * (BLOCK + 64);
        MmioTransport transport = new MmioTransport(device, OffHeapGuestMemory.allocate(memory), new VirtqueueFactoryComponent());
        try {
            MmioBlkGuest guest = new MmioBlkGuest(transport.port()).init(-1L, queues, QUEUE_SIZE);
            // Buffers, allocated up front on this thread (the guest's allocator is single-threaded).
            Random random = new Random(4);
            List<List<List<io.kickplug.api.virtio.BufferSpec>>> chains = new ArrayList<>();
            List<List<Slot>> slots = new ArrayList<>();
            for (int q = 0; q < queues; q++) {
                List<List<io.kickplug.api.virtio.BufferSpec>> qc = new ArrayList<>();
                List<Slot> qs = new ArrayList<>();
                for (int i = 0; i < iodepth; i++) {
                    long sector = (long) random.nextInt((int) (DISK / BLOCK)) * (BLOCK / 512);
                    long header = guest.header(VirtioBlk.T_IN, sector);
                    long data = guest.alloc(BLOCK, 16);
                    long status = guest.alloc(1, 1);
                    qc.add(List.of(readable(header, 16), writable(data, BLOCK), writable(status, 1)));
                    qs.add(new Slot(i, status, header));
                }
                chains.add(qc);
                slots.add(qs);
            }
            LongAdder completed = new LongAdder();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicBoolean failed = new AtomicBoolean();
            CountDownLatch started = new CountDownLatch(drivers);
            List<Thread> driverThreads = new ArrayList<>();
            for (int d = 0; d < drivers; d++) {
                List<Integer> mine = new ArrayList<>();
                for (int q = d; q < queues; q += drivers) {
                    mine.add(q);
                }
                Thread t = new Thread(() -> {
                    // randread: every request reads a new random 4 KiB block, not the slot's first one again.
                    Random sectors = new Random(mine.get(0) + 1000L);
                    int blocks = (int) (DISK / BLOCK);
                    for (int q : mine) {
                        for (int i = 0; i < iodepth; i++) {
                            guest.submit(q, chains.get(q).get(i), false, slots.get(q).get(i));
                        }
                    }
                    started.countDown();
                    while (!stop.get()) {
                        int got = 0;
                        for (int q : mine) {
                            UsedBuffer used;
                            while ((used = guest.queue(q).getUsed()) != null) {
                                Slot s = (Slot) used.token();
                                if (guest.memory().readU8(s.status()) != VirtioBlk.S_OK) {
                                    failed.set(true);
                                }
                                guest.memory().writeU64(s.header() + 8,
                                        (long) sectors.nextInt(blocks) * (BLOCK / 512));
                                guest.submit(q, chains.get(q).get(s.index()), false, s);
                                got++;
                            }
                        }
                        if (got == 0) {
                            Thread.yield(); // 2-core machines: let the I/O threads run
                        } else {
                            completed.add(got);
                        }
                    }
                }, "bench-driver" + d);
                driverThreads.add(t);
                t.start();
            }
            started.await();
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
            for (Thread t : driverThreads) {
                t.join();
            }
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
