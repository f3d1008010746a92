package io.kickplug.batching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.notify.NotifierRegistry;
import io.kickplug.guest.engine.GuestMachine;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.guest.fio.Fio;
import io.kickplug.guest.fio.FioRunner;
import io.kickplug.guest.fio.JobResult;
import io.kickplug.guest.fio.FioReport;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Strategies swapped, and their services removed and re-added, while the simulated guest runs a fio write
 * and verify workload through the real virtio-mmio transport and virtio-blk device on 4 queues and 2 I/O
 * threads. Every request completes exactly once (each pass's I/O count is exact and verify passes) and no
 * request waits longer than {@link #BOUND}: a lost interrupt would leave its vCPU waiting for the driver's
 * timeout, far beyond it.
 */
class SwapUnderLoadTest {

    private static final String DISK = "swap";
    private static final Duration BOUND = Duration.ofSeconds(2);
    private static final int SWAPS = 144;
    private static final int REMOVALS = SWAPS / 12;
    private static final List<String> STRATEGIES = List.of(CompletionNotifier.IMMEDIATE, BottomHalfNotifier.NAME,
            DeferCallNotifier.NAME);

    /**
     * Two deep jobs keep queues busy, two at depth 1 wait for every single interrupt. virtio-mmio has one
     * interrupt line that every vCPU checks its queues on, so busy queues would hide a lost interrupt of
     * another queue: every other pass runs {@link #LONE}, one job alone at depth 1.
     */
    private static final List<String> MIXED = List.of("--rw=randwrite", "--bs=4k", "--size=1m", "--ioengine=libaio",
            "--verify=crc32c", "--name=a", "--offset=0", "--iodepth=16", "--name=b", "--offset=2m", "--iodepth=16",
            "--name=c", "--offset=4m", "--iodepth=1", "--name=d", "--offset=6m", "--iodepth=1");
    private static final List<String> LONE = List.of("--rw=randwrite", "--bs=4k", "--size=1m",
            "--ioengine=libaio", "--verify=crc32c", "--name=a", "--offset=0", "--iodepth=1");

    private final NotifierRegistry notifiers = new NotifierRegistry();
    private final DiskRegistry disks = new DiskRegistry(new TransportFactoryComponent(new VirtqueueFactoryComponent()), new IoThreadFactoryComponent(),
            new GuestMemoryFactoryComponent(), () -> List.of(new MemoryBackendFactory()), notifiers);
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();
    private final VirtqueueFactoryComponent virtqueues = new VirtqueueFactoryComponent();

    @AfterEach
    void tearDown() {
        disks.close();
    }

    @Test
    void swapsAndRemovalsUnderLoadLoseNoInterrupt() throws Exception {
        disks.attach(new DiskSpec(DISK, new BackendSpec("memory", null, 16L << 20, false), TransportKind.MMIO, 4,
                DiskSpec.DEFAULT_QUEUE_SIZE, 2, null, DiskSpec.DEFAULT_GUEST_MEMORY));
        CompletionNotifier[] bh = {new BottomHalfNotifier()};
        CompletionNotifier[] deferCall = {new DeferCallNotifier()};
        long serviceId = 1;
        notifiers.add(BottomHalfNotifier.NAME, bh[0], 0, serviceId++);
        notifiers.add(DeferCallNotifier.NAME, deferCall[0], 0, serviceId++);

        AtomicBoolean swapping = new AtomicBoolean(true);
        List<FioReport> reports = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> workload = CompletableFuture.runAsync(() -> {
            MachineConfig config = MachineConfig.defaults(DISK).withVcpus(4).withLatencies(0, 0)
                    .withTimeout(Duration.ofSeconds(10));
            int pass = 0;
            do {
                try (GuestMachine machine = engine.boot(disks.port(DISK), virtqueues, config)) {
                    reports.add(FioRunner.run(machine, DISK, Fio.parse(pass++ % 2 == 0 ? MIXED : LONE).jobs()));
                }
            } while (swapping.get());
        });

        SplittableRandom random = new SplittableRandom(6);
        int removals = 0;
        int swap = 0;
        for (; (swap < SWAPS || reports.size() < 8) && !workload.isDone(); swap++) {
            String strategy = STRATEGIES.get(swap % STRATEGIES.size());
            int queue = random.nextInt(5) - 1; // -1: all queues
            List<QueueCounters> after = disks.setStrategy(DISK, strategy, queue);
            for (QueueCounters c : after) {
                assertEquals(strategy, c.strategy(), "queue " + c.queue() + " did not switch in time");
            }
            if (swap % 12 == 11) {
                // A bundle stopped and started again: the service object goes away and a new one comes.
                boolean both = removals % 2 == 0;
                CompletionNotifier[] leaving = removals % 3 == 0 ? deferCall : bh;
                String name = leaving == bh ? BottomHalfNotifier.NAME : DeferCallNotifier.NAME;
                notifiers.remove(leaving[0]);
                for (QueueCounters c : disks.counters(DISK)) {
                    assertTrue(!c.strategy().equals(name), "queue " + c.queue() + " still uses removed " + name);
                }
                if (both) {
                    notifiers.remove(leaving == bh ? deferCall[0] : bh[0]);
                }
                leaving[0] = leaving == bh ? new BottomHalfNotifier() : new DeferCallNotifier();
                notifiers.add(name, leaving[0], 0, serviceId++);
                if (both) {
                    CompletionNotifier[] other = leaving == bh ? deferCall : bh;
                    other[0] = other == bh ? new BottomHalfNotifier() : new DeferCallNotifier();
                    notifiers.add(other == bh ? BottomHalfNotifier.NAME : DeferCallNotifier.NAME, other[0], 0,
                            serviceId++);
                }
                removals++;
            }
        }
        swapping.set(false);
        workload.get(2, TimeUnit.MINUTES);
        assertEquals(swap / 12, removals);
        assertTrue(removals >= REMOVALS, "removals " + removals);

        long writes = 0;
        for (FioReport report : reports) {
            assertTrue(!report.failed(), "a pass failed: " + Fio.format(report,
                    io.kickplug.guest.fio.FioInvocation.OutputFormat.NORMAL));
            for (JobResult job : report.jobs()) {
                assertEquals(0, job.error(), job.name() + ": " + job.errors());
                assertEquals(256, job.write().ios(), job.name() + " writes");
                assertEquals(256, job.read().ios(), job.name() + " verify reads");
                long worst = Math.max(job.write().lat().max(), job.read().lat().max());
                assertTrue(worst < BOUND.toNanos(), job.name() + " waited " + worst / 1_000_000 + " ms");
                writes += job.write().ios();
            }
        }
        assertTrue(writes > 0);
        long requests = 0;
        long switches = 0;
        for (QueueCounters c : disks.counters(DISK)) {
            assertEquals(0, c.inFlight(), "queue " + c.queue());
            requests += c.requests();
            switches += c.switches();
        }
        assertEquals(disks.device(DISK).stats().requestsCompleted(), requests);
        assertTrue(switches >= SWAPS / 2, "switches " + switches);
    }
}
