package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.DeviceRecovery;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.manager.SharedMemory;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guest across device removals (hot-swap): the disk's whole device side (registry, transport, rings,
 * device, backend) is torn down and rebuilt from the same spec over the same shared memory while jobs run on
 * an MMIO and a PCI disk with two queues each; every request completes exactly once and the data is right.
 */
class DeviceRemovalTest {

    private static final long DISK = 8L << 20;
    private static final int SWAPS = Integer.getInteger("kickplug.swap.count", 15);

    @TempDir
    Path shm;

    private final ConcurrentLinkedQueue<DeviceRecovery> log = new ConcurrentLinkedQueue<>();
    private volatile DiskRegistry host;
    private final VirtqueueFactory rings = new VirtqueueFactoryComponent();
    private final List<GuestMachine> machines = new ArrayList<>();

    private DiskRegistry newHost(boolean shared) {
        DiskRegistry r = new DiskRegistry(new TransportFactoryComponent(rings), new IoThreadFactoryComponent(),
                new GuestMemoryFactoryComponent(), () -> List.of(new MemoryBackendFactory()));
        if (shared) {
            r.setSharedMemory(new SharedMemory(shm));
        }
        return r;
    }

    private static List<DiskSpec> specs() {
        return List.of(DiskSpec.memory("m0", DISK).withQueues(2, 64),
                DiskSpec.memory("p0", DISK).withQueues(2, 64).withTransport(TransportKind.PCI));
    }

    private DeviceSource source(String disk) {
        return new DeviceSource() {
            @Override
            public GuestPort port() {
                try {
                    return host.port(disk);
                } catch (DiskException e) {
                    return null;
                }
            }

            @Override
            public VirtqueueFactory virtqueues() {
                return rings;
            }
        };
    }

    private GuestMachine boot(String disk, boolean withSource) {
        MachineConfig config = MachineConfig.defaults(disk).withVcpus(2).withTimeout(Duration.ofSeconds(20));
        io.kickplug.api.guest.KickPolicy policy = io.kickplug.guest.kick.KickPolicies.builtIn().get(config.kickPolicy());
        GuestMachine m = VcpuMachine.boot(host.port(disk), rings, config, policy,
                new io.kickplug.guest.lock.LockRegistry(), withSource ? source(disk) : null, log::add);
        machines.add(m);
        return m;
    }

    /** Tears the device side down (every disk quiesces) and builds it again from the same specs. */
    private void swap(boolean shared) {
        host.close();
        DiskRegistry next = newHost(shared);
        for (DiskSpec s : specs()) {
            next.attach(s);
        }
        host = next;
    }

    @AfterEach
    void tearDown() {
        machines.forEach(GuestMachine::close);
        if (host != null) {
            host.close();
        }
    }

    @Test
    void everyRequestCompletesOnceAndDataSurvivesRepeatedRemoval() throws Exception {
        host = newHost(true);
        specs().forEach(host::attach);
        List<CountingJob> jobs = new ArrayList<>();
        List<Thread> runners = new ArrayList<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        for (DiskSpec s : specs()) {
            GuestMachine m = boot(s.name(), true);
            List<GuestJob> perDisk = new ArrayList<>();
            for (int j = 0; j < 2; j++) {
                CountingJob job = new CountingJob(j * (DISK / 2), DISK / 2, 4096, 8, 6);
                jobs.add(job);
                perDisk.add(job);
            }
            Thread t = new Thread(() -> {
                try {
                    m.runJobs(perDisk, Duration.ofMinutes(2));
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "runner-" + s.name());
            runners.add(t);
            t.start();
        }
        int swaps = 0;
        // Swap while the jobs run; each swap waits until the guests completed I/O on the returned devices.
        while (swaps < SWAPS && runners.stream().anyMatch(Thread::isAlive)) {
            long before = jobs.stream().mapToLong(CountingJob::completions).sum();
            swap(true);
            swaps++;
            CountingJob.awaitProgress(jobs, before, () -> runners.stream().anyMatch(Thread::isAlive));
        }
        for (Thread t : runners) {
            t.join(Duration.ofMinutes(2).toMillis());
        }
        assertTrue(errors.isEmpty(), () -> "runs failed: " + errors);
        assertTrue(swaps >= Math.min(SWAPS, 3), "the jobs ended before enough swaps: " + swaps);
        jobs.forEach(CountingJob::assertIntact);
        assertFalse(log.isEmpty(), "the guests saw the device go and come back");
        for (DeviceRecovery r : log) {
            assertEquals(null, r.error(), "recovery failed");
        }
        long resubmitted = log.stream().mapToLong(DeviceRecovery::resubmitted).sum();
        long longest = log.stream().mapToLong(DeviceRecovery::pauseNanos).max().orElse(-1);
        System.out.println("DeviceRemovalTest: " + swaps + " swaps, " + log.size() + " recoveries, " + resubmitted
                + " requests resubmitted, longest pause " + longest / 1_000_000 + " ms");
    }

    @Test
    void aGuestWithoutSourceFailsWithAClearMessage() {
        host = newHost(true);
        specs().forEach(host::attach);
        GuestMachine m = boot("m0", false);
        host.close();
        host = null;
        GuestDriverException e = assertThrows(GuestDriverException.class,
                () -> m.runJobs(List.of(new CountingJob(0, 1 << 20, 4096, 4, 1)), Duration.ofSeconds(20)));
        assertTrue(e.getMessage().contains("was removed"), e.getMessage());
    }

    /**
     * A machine closed while its device is away (its job ended between a removal and the return, as a kp:fio
     * pass that finished just before a bundle update): the recovery ends, reported without an error.
     */
    @Test
    void closingTheMachineWhileItsDeviceIsAwayIsNotAFailedRecovery() {
        host = newHost(true);
        specs().forEach(host::attach);
        GuestMachine m = boot("m0", true);
        host.close(); // the removal notice starts the recovery, which now waits for the disk
        host = newHost(true); // with no disks: it does not come back
        m.close();
        DeviceRecovery r = log.peek();
        assertNotNull(r, "the removal is reported");
        assertEquals(1, log.size());
        assertEquals(null, r.error(), "closing the machine is the end of its job, not a failed recovery");
        assertEquals(0, r.probedAtNanos());
    }

    @Test
    void aDeviceBackWithOtherGuestMemoryIsRefused() throws Exception {
        host = newHost(false);
        specs().forEach(host::attach);
        GuestMachine m = boot("m0", true);
        swap(false);
        Throwable e = assertThrows(RuntimeException.class,
                () -> m.runJobs(List.of(new CountingJob(0, 1 << 20, 4096, 4, 1)), Duration.ofSeconds(30)));
        assertTrue(e.getMessage().contains("other guest memory"), e.getMessage());
        DeviceRecovery r = log.peek();
        assertNotNull(r);
        assertNotNull(r.error());
    }

    /**
     * Writes every block of its range (depth requests in flight), then reads each back and checks it, for
     * {@code passes} passes; counts completions per request, so a double completion shows.
     */
    static final class CountingJob implements GuestJob {
        final long start;
        final long length;
        final int bs;
        final int depth;
        final int passes;
        final AtomicInteger doubles = new AtomicInteger();
        final AtomicInteger mismatches = new AtomicInteger();
        final AtomicInteger errors = new AtomicInteger();
        private final AtomicIntegerArray done = new AtomicIntegerArray(1 << 20);
        private final AtomicInteger completed = new AtomicInteger();
        volatile int submitted;
        private final ArrayList<GuestBuffer> free = new ArrayList<>();
        private long cursor;
        private int pass;
        private boolean reading;
        private int inFlight;

        CountingJob(long start, long length, int bs, int depth, int passes) {
            this.start = start;
            this.length = length;
            this.bs = bs;
            this.depth = depth;
            this.passes = passes;
        }

        long completions() {
            return completed.get();
        }

        /** Every submitted request completed once, without error, and read back what was written. */
        void assertIntact() {
            assertEquals(0, doubles.get(), "requests completed twice");
            assertEquals(submitted, completions(), "every submitted request completes");
            assertEquals(0, mismatches.get(), "data read back differs from what was written");
            assertEquals(0, errors.get(), "requests failed");
        }

        /**
         * Waits (at most 20 s) until {@code jobs} completed more than {@code before} requests in all, or until
         * {@code running} says their runners ended.
         */
        static void awaitProgress(List<CountingJob> jobs, long before, BooleanSupplier running) {
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (jobs.stream().mapToLong(CountingJob::completions).sum() == before && running.getAsBoolean()
                    && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
        }

        @Override
        public void start(Vcpu v) {
            v.allocateBuffers(depth, bs, free);
        }

        @Override
        public boolean step(Vcpu v) {
            boolean any = false;
            while (!free.isEmpty() && pass < passes) {
                if (cursor >= length) {
                    if (inFlight > 0) {
                        break; // the phase switches once its I/O completed
                    }
                    cursor = 0;
                    if (reading) {
                        pass++;
                    }
                    reading = !reading;
                    continue;
                }
                GuestBuffer buf = free.remove(free.size() - 1);
                long offset = start + cursor;
                cursor += bs;
                int id = submitted++;
                boolean read = reading;
                if (!read) {
                    fill(buf.view(), offset, pass);
                }
                int p = pass;
                inFlight++;
                v.submit(read ? IoOp.READ : IoOp.WRITE, offset, bs, buf, false, (status, at) -> {
                    if (done.getAndIncrement(id % done.length()) > 0) {
                        doubles.incrementAndGet();
                    }
                    completed.incrementAndGet();
                    inFlight--;
                    if (status != 0) {
                        errors.incrementAndGet();
                    } else if (read && !matches(buf.view(), offset, p)) {
                        mismatches.incrementAndGet();
                    }
                    free.add(buf);
                });
                any = true;
            }
            if (any) {
                v.commit();
            }
            return pass < passes || inFlight > 0;
        }

        private static void fill(ByteBuffer b, long offset, int pass) {
            for (int i = 0; b.remaining() >= 8; i++) {
                b.putLong(offset * 31 + pass * 1_000_003L + i);
            }
        }

        private static boolean matches(ByteBuffer b, long offset, int pass) {
            for (int i = 0; b.remaining() >= 8; i++) {
                if (b.getLong() != offset * 31 + pass * 1_000_003L + i) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public void finish(Vcpu v) {
        }
    }
}
