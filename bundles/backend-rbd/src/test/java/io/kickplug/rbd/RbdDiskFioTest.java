package io.kickplug.rbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.FixedBackendIo;
import io.kickplug.api.blk.ForwardingAsyncBackend;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.RbdImage;
import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.transport.MmioRegisters;
import io.kickplug.api.transport.RegisterWindow;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.guest.fio.Fio;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.testkit.Await;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * RBD disks through the whole device: the simulated guest's fio (its virtio_blk driver, virtio-mmio, split rings,
 * the virtio-blk device) on an image of the test cluster, attached by the disk registry as {@code kp:attach} does.
 */
@ExtendWith(MicroCeph.class)
class RbdDiskFioTest {

    /** The factories the registry sees now: the bundle's service, gone while "stopped". */
    private final List<BackendFactory> factories = new CopyOnWriteArrayList<>();
    private final DiskRegistry disks = new DiskRegistry(new TransportFactoryComponent(new VirtqueueFactoryComponent()),
            new IoThreadFactoryComponent(), new GuestMemoryFactoryComponent(), () -> List.copyOf(factories));
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();
    private final VirtqueueFactoryComponent virtqueues = new VirtqueueFactoryComponent();

    @AfterEach
    void tearDown() {
        disks.close();
    }

    private String fio(String disk, String... args) {
        return Fio.run(engine, disks.port(disk), virtqueues, disk, Fio.parse(List.of(args)),
                () -> disks.ioThreadCpuNanos(disk));
    }

    private DiskSpec rbdDisk(MicroCeph ceph, String name, String image, int queues) {
        return new DiskSpec(name, RbdBackendTest.spec(ceph, image, null, false), TransportKind.MMIO, queues,
                DiskSpec.DEFAULT_QUEUE_SIZE, 1, null, DiskSpec.DEFAULT_GUEST_MEMORY);
    }

    /** Two randwrite jobs with crc32c verify on the two halves of the first 8 MiB; verify_only as given. */
    private static String jobFile(Path dir, String name, String verifyOnly) throws Exception {
        Path f = dir.resolve(name);
        Files.writeString(f, """
                [global]
                rw=randwrite
                verify=crc32c
                verify_only=%s
                bs=4k
                size=4m
                iodepth=16
                ioengine=libaio
                [a]
                offset=0
                [b]
                offset=4m
                """.formatted(verifyOnly));
        return f.toString();
    }

    private static String md5(byte[] b) throws Exception {
        return java.util.HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(b));
    }

    @Test
    void fioVerifyOnTwoQueuesThenVerifyOnlyAndRbdExportHoldsWhatFioWrote(MicroCeph ceph, @TempDir Path dir)
            throws Exception {
        String image = RbdBackendTest.newImage(ceph, 16);
        RbdBackendFactory factory = new RbdBackendFactory();
        factories.add(factory);
        disks.attach(rbdDisk(ceph, "r1", image, 2));
        assertEquals(16 << 20, disks.info("r1").sizeBytes(), "the capacity is the image's size");
        engine.configure(new GuestSettings(2, 1000, 500, "outside-lock")); // two vCPUs: one queue each
        String write = fio("r1", jobFile(dir, "w.fio", "0"));
        assertTrue(write.contains("err= 0: "), write);
        String verify = fio("r1", jobFile(dir, "v.fio", "1"));
        assertTrue(verify.contains("err= 0: "), verify);
        // What the guest wrote is in the image: `rbd export` equals the disk's bytes read through a second client.
        byte[] exported = ceph.rbdBytes("export", "rbd/" + image, "-");
        assertEquals(16 << 20, exported.length);
        ByteBuffer all = ByteBuffer.allocateDirect(16 << 20);
        try (BlockBackend reader = new RbdBackendFactory().open(RbdBackendTest.spec(ceph, image, null, true))) {
            reader.read(0, new ByteBuffer[] {all.duplicate()});
        }
        byte[] seen = new byte[16 << 20];
        all.get(seen);
        assertEquals(md5(exported), md5(seen));
        assertTrue(!md5(new byte[8 << 20]).equals(md5(java.util.Arrays.copyOf(seen, 8 << 20))),
                "fio wrote the first 8 MiB");
    }

    @Test
    void kpResizeGrowsTheImageAndTheGuestSeesTheNewCapacity(MicroCeph ceph) throws Exception {
        String image = RbdBackendTest.newImage(ceph, 4);
        factories.add(new RbdBackendFactory());
        disks.attach(rbdDisk(ceph, "r2", image, 1));
        disks.resize("r2", 8 << 20);
        assertEquals(8 << 20, disks.info("r2").sizeBytes());
        assertTrue(ceph.rbd("info", "rbd/" + image).contains("size 8 MiB"), "the image itself grew");
        // The guest's fio sizes the disk from the device's capacity: it writes (and verifies) the grown half, which
        // the device refuses past the capacity it announces (VIRTIO 1.2 section 5.2.6.2).
        String write = fio("r2", "--name=tail", "--rw=write", "--verify=crc32c", "--bs=64k", "--offset=4m",
                "--size=4m", "--ioengine=libaio", "--iodepth=4");
        assertTrue(write.contains("err= 0: "), write);
    }

    /** The device's configuration generation (VIRTIO 1.2 section 4.2.2, ConfigGeneration). */
    private long configGeneration(String disk) {
        return disks.port(disk).mmio().read(MmioRegisters.CONFIG_GENERATION, 4);
    }

    /** The capacity in the device's configuration space, in bytes (section 5.2.4: capacity, le64, in sectors). */
    private long configCapacity(String disk) {
        RegisterWindow mmio = disks.port(disk).mmio();
        long low = mmio.read(MmioRegisters.CONFIG, 4);
        long high = mmio.read(MmioRegisters.CONFIG + 4, 4);
        return ((high << 32) | low) * 512;
    }

    @Test
    void anRbdResizeByAnotherClientReachesTheGuestAsAConfigurationChange(MicroCeph ceph) throws Exception {
        String image = RbdBackendTest.newImage(ceph, 4);
        factories.add(new RbdBackendFactory());
        disks.attach(rbdDisk(ceph, "r5", image, 1));
        // The guest drives the device first (DRIVER_OK), so a change is one it would be interrupted for.
        String first = fio("r5", "--name=head", "--rw=write", "--verify=crc32c", "--bs=64k", "--size=1m",
                "--ioengine=libaio", "--iodepth=4");
        assertTrue(first.contains("err= 0: "), first);
        long generation = configGeneration("r5");
        // Another client grows the image: librbd's update watch tells the backend, the disk takes the new size
        // through kp:resize's path and the device announces it (VIRTIO 1.2 sections 2.5 and 5.2.6.2).
        ceph.rbd("resize", "--size", "8M", "rbd/" + image);
        Await.await(() -> disks.info("r5").sizeBytes() == 8 << 20, Duration.ofSeconds(30),
                "the disk taking the grown image's size");
        assertEquals(8 << 20, configCapacity("r5"), "the device's capacity");
        long grown = configGeneration("r5");
        assertTrue(grown != generation, "the configuration generation changed");
        // The guest's fio sizes the disk from the capacity it reads: it writes and verifies the grown half.
        String tail = fio("r5", "--name=tail", "--rw=write", "--verify=crc32c", "--bs=64k", "--offset=4m",
                "--size=4m", "--ioengine=libaio", "--iodepth=4");
        assertTrue(tail.contains("err= 0: "), tail);
        // A shrink from outside is taken as kp:resize takes one.
        ceph.rbd("resize", "--allow-shrink", "--size", "6M", "rbd/" + image);
        Await.await(() -> disks.info("r5").sizeBytes() == 6 << 20, Duration.ofSeconds(30),
                "the disk taking the shrunk image's size");
        assertEquals(6 << 20, configCapacity("r5"));
        assertTrue(configGeneration("r5") != grown, "the configuration generation changed again");
        // kp:resize on the same disk still resizes the image itself, and the watch's own echo changes nothing.
        disks.resize("r5", 10 << 20);
        assertTrue(ceph.rbd("info", "rbd/" + image).contains("size 10 MiB"));
        assertEquals(10 << 20, disks.info("r5").sizeBytes());
    }

    /** The rbd factory's backends, counting the operations that complete and those that fail. */
    private static final class Counting implements BackendFactory {
        final RbdBackendFactory rbd = new RbdBackendFactory();
        final AtomicLong completed = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final List<String> failures = new CopyOnWriteArrayList<>();

        @Override
        public String kind() {
            return rbd.kind();
        }

        @Override
        public BlockBackend open(BackendSpec spec) throws java.io.IOException {
            AsyncBlockBackend opened = (AsyncBlockBackend) rbd.open(spec);
            return new ForwardingAsyncBackend(opened) {
                @Override
                public void submit(BackendIo io) {
                    view.submit(new CountedIo(io));
                }
            };
        }

        private final class CountedIo extends FixedBackendIo {
            private final BackendIo io;

            CountedIo(BackendIo io) {
                super(io.op(), io.offset(), io.length(), io.buffers(), io.fua(), io.mayUnmap());
                this.io = io;
            }

            @Override
            public void complete(java.io.IOException error) {
                completed.incrementAndGet();
                if (error != null) {
                    failed.incrementAndGet();
                    failures.add(error.getMessage());
                }
                io.complete(error);
            }
        }
    }

    @Test
    void theOsdRestartedUnderFioVerifyOnTwoQueuesCostsTimeNotErrors(MicroCeph ceph, @TempDir Path dir)
            throws Exception {
        String image = RbdBackendTest.newImage(ceph, 64);
        Counting counting = new Counting();
        factories.add(counting);
        disks.attach(rbdDisk(ceph, "r6", image, 2));
        engine.configure(new GuestSettings(2, 1000, 500, "outside-lock")); // two vCPUs: one queue each
        Path write = dir.resolve("w.fio");
        Files.writeString(write, RESTART_JOB.formatted(0));
        CompletableFuture<String> run = CompletableFuture.supplyAsync(() -> fio("r6", write.toString()));
        // The longest time without a completed request that ended with requests completing again (a stall that
        // the requests waited out, not fio's end), sampled every 5 ms while the OSD restarts.
        AtomicLong longestStallNs = new AtomicLong();
        AtomicBoolean sampling = new AtomicBoolean(true);
        Thread sampler = new Thread(() -> {
            long last = disks.info("r6").requestsCompleted();
            long since = System.nanoTime();
            while (sampling.get()) {
                LockSupport.parkNanos(5_000_000);
                long now = disks.info("r6").requestsCompleted();
                long t = System.nanoTime();
                if (now != last) {
                    longestStallNs.accumulateAndGet(t - since, Math::max);
                    last = now;
                    since = t;
                }
            }
        }, "stall-sampler");
        Await.await(() -> disks.info("r6").requestsCompleted() > 500 || run.isDone(), Duration.ofSeconds(60),
                "fio's first writes");
        assertFalse(run.isDone(), "fio still writing when the OSD stops");
        sampler.start();
        long t0 = System.nanoTime();
        String restart = ceph.restartOsd();
        long restartMs = (System.nanoTime() - t0) / 1_000_000;
        String out = run.get(300, TimeUnit.SECONDS);
        sampling.set(false);
        sampler.join();
        System.out.printf("RbdDiskFioTest: OSD restart %d ms (%s); longest time without a completion %d ms; "
                + "%d operations, %d failed%n", restartMs, restart.lines().filter(l -> l.startsWith("micro-ceph"))
                .findFirst().orElse(restart), longestStallNs.get() / 1_000_000, counting.completed.get(),
                counting.failed.get());
        assertEquals(0, counting.failed.get(), () -> "operations failed: " + counting.failures);
        assertTrue(out.contains("err= 0: "), out);
        // The requests waited for the OSD and then completed: a pause of at least a second (the OSD's stop and
        // start take seconds) that ended with completions, so fio ran across the restart.
        assertTrue(longestStallNs.get() > 1_000_000_000L, () -> "no stall that requests waited out: the longest "
                + "was " + longestStallNs.get() / 1_000_000 + " ms; fio ended before the OSD stopped?");
        Path verify = dir.resolve("v.fio");
        Files.writeString(verify, RESTART_JOB.formatted(1));
        String again = fio("r6", verify.toString());
        assertTrue(again.contains("err= 0: "), again);
        assertEquals(0, counting.failed.get(), () -> "operations failed: " + counting.failures);
    }

    /** Two randwrite jobs with crc32c verify on the two halves of the first 48 MiB; verify_only as formatted. */
    private static final String RESTART_JOB = """
            [global]
            rw=randwrite
            verify=crc32c
            verify_only=%d
            bs=4k
            size=24m
            iodepth=16
            ioengine=libaio
            [a]
            offset=0
            [b]
            offset=24m
            """;

    @Test
    void theBundleStoppedStartedAndUpdatedUnderFioVerifyHoldsAndReconnects(MicroCeph ceph) throws Exception {
        String image = RbdBackendTest.newImage(ceph, 16);
        RbdBackendFactory first = new RbdBackendFactory();
        factories.add(first);
        disks.attach(rbdDisk(ceph, "r3", image, 2));
        CompletableFuture<String> run = CompletableFuture.supplyAsync(() -> fio("r3", "--name=s", "--rw=randwrite",
                "--verify=crc32c", "--bs=4k", "--size=16m", "--iodepth=32", "--ioengine=libaio"));
        Await.await(() -> disks.info("r3").requestsCompleted() > 200 || run.isDone(), Duration.ofSeconds(60),
                "fio's first writes");
        BackendFactory current = first;
        int swaps = 0;
        // Stop (the factory goes: requests are held, the backend closes), start or update (a factory comes: the
        // image opens again and the held requests go to it), while fio's writes run.
        for (; swaps < 3 && !run.isDone(); swaps++) {
            long before = disks.info("r3").requestsCompleted();
            factories.remove(current);
            disks.backendFactoryGone(current);
            assertEquals(0, ((RbdBackendFactory) current).connections(), "the stopped bundle's connection is closed");
            current = new RbdBackendFactory(); // a new version of the bundle: a new factory
            factories.add(current);
            disks.backendFactoryArrived(current);
            Await.await(() -> disks.info("r3").requestsCompleted() > before + 100 || run.isDone(),
                    Duration.ofSeconds(60), "requests completing after the swap");
        }
        String out = run.get(120, TimeUnit.SECONDS);
        assertTrue(swaps > 0, "at least one swap ran under fio");
        assertTrue(out.contains("err= 0: "), out);
        assertEquals(1, ((RbdBackendFactory) current).connections());
    }
}
