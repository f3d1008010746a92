package io.kickplug.guest.compare;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.notify.NotifierRegistry;
import io.kickplug.guest.engine.GuestMachine;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.guest.fio.Fio;
import io.kickplug.guest.fio.FioReport;
import io.kickplug.guest.fio.FioRunner;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * kp:compare's runner through the real stack (simulated guest, virtio-blk device, memory backend) with a strategy
 * registered the way a plugin's is, and that strategy going away under fio verify: the queues fall back to
 * {@code immediate} with the notification owed sent (VIRTIO 1.2 section 2.7.7.2: the driver that asked for one gets
 * it), and verify passes.
 */
class CompareEndToEndTest {

    private static final long DISK = 16L << 20;

    /** A plugin-like strategy: one decision at the end of each batch (what defer-call does, without deferring). */
    static final class EndOfBatch implements CompletionNotifier {
        @Override
        public void end(Queue queue) {
            queue.notifyIfNeeded();
        }
    }

    private final NotifierRegistry notifiers = new NotifierRegistry();
    private final MemoryBackendFactory memory = new MemoryBackendFactory();
    private final DiskRegistry disks = new DiskRegistry(new TransportFactoryComponent(new VirtqueueFactoryComponent()),
            new IoThreadFactoryComponent(), new GuestMemoryFactoryComponent(), () -> List.of(memory), notifiers);
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();
    private final VirtqueueFactoryComponent virtqueues = new VirtqueueFactoryComponent();

    @AfterEach
    void tearDown() {
        disks.close();
    }

    private void attach(String name, int queues) {
        disks.attach(new DiskSpec(name, new BackendSpec("memory", null, DISK, false), TransportKind.MMIO, queues,
                DiskSpec.DEFAULT_QUEUE_SIZE, 1, null, DiskSpec.DEFAULT_GUEST_MEMORY));
        engine.configure(new GuestSettings(2, 1000, 500, "outside-lock"));
    }

    @Test
    void comparesTwoStrategiesInInterleavedRoundsAndPutsTheDisksOwnBack() {
        EndOfBatch plugin = new EndOfBatch();
        notifiers.add("end-of-batch", plugin, 0, 1);
        attach("d0", 2);
        disks.setStrategy("d0", "end-of-batch", 1); // the disk's own choice on queue 1, kept after the comparison
        CompareOptions o = CompareOptions.parse(List.of("d0", "--strategies", "immediate,end-of-batch", "--job",
                "rw=randread bs=4k iodepth=32 runtime=200ms numjobs=2", "--rounds", "2"));
        List<String> log = new ArrayList<>();
        CompareResult r;
        try (GuestMachine machine = engine.boot(disks.port("d0"), virtqueues, engine.defaults("d0"))) {
            r = CompareRun.run("d0", o.job(), new ComparePlan(o.strategies(), o.rounds()), disks,
                    () -> FioRunner.run(machine, "d0", Fio.parse(o.jobArgs()).jobs(),
                            () -> disks.ioThreadCpuNanos("d0")), log::add);
        }
        assertEquals(List.of("immediate", "end-of-batch", "immediate", "end-of-batch"),
                r.samples().stream().map(Sample::candidate).toList());
        assertEquals(4, log.size(), String.join("\n", log));
        for (Sample s : r.samples()) {
            assertTrue(s.errors().isEmpty(), s.errors().toString());
            assertTrue(s.ios() > 0 && s.seconds() > 0, s.toString());
            // Every I/O the job completed is a request the device took (a few more may be in the counters: the
            // guest's own reads at boot are before the first sample).
            assertTrue(s.requests() >= s.ios(), s.toString());
            assertTrue(s.interrupts() > 0 && s.interrupts() <= s.requests(), s.toString());
            assertTrue(s.p99Micros() >= s.p50Micros() && s.p50Micros() > 0, s.toString());
        }
        // Back to what the disk was configured with: immediate on queue 0, end-of-batch on queue 1.
        List<String> after = disks.counters("d0").stream().map(QueueCounters::configured).toList();
        assertEquals(List.of("immediate", "end-of-batch"), after);
        String text = CompareFormat.text(r);
        assertTrue(text.contains("immediate") && text.contains("end-of-batch"), text);
    }

    @Test
    void pollingSettingsRunWithEachStrategyAndTheDisksOwnPollingComesBack() {
        disks.setPollPolicy(new io.kickplug.poll.AdaptivePollPolicy());
        attach("d2", 1);
        CompareOptions o = CompareOptions.parse(List.of("d2", "--strategies", "immediate", "--poll", "off,65536",
                "--job", "rw=randread bs=4k iodepth=8 runtime=100ms", "--rounds", "1"));
        List<Setting> settings = Setting.of(o.strategies(), o.polls());
        List<Boolean> seen = new ArrayList<>();
        CompareRun.Polling polling = new CompareRun.Polling() {
            @Override
            public io.kickplug.api.poll.PollStatus status() {
                return disks.pollStatus("d2");
            }

            @Override
            public io.kickplug.api.poll.PollStatus set(boolean enabled, io.kickplug.api.poll.PollParams p) {
                io.kickplug.api.poll.PollStatus s = disks.setPolling("d2", enabled, p);
                seen.add(s.active());
                return s;
            }
        };
        CompareResult r;
        try (GuestMachine machine = engine.boot(disks.port("d2"), virtqueues, engine.defaults("d2"))) {
            r = CompareRun.run("d2", o.job(), settings, o.rounds(), disks, polling,
                    () -> FioRunner.run(machine, "d2", Fio.parse(o.jobArgs()).jobs()), line -> {
                    });
        }
        assertEquals(List.of("immediate/off", "immediate/poll:65536"),
                r.samples().stream().map(Sample::candidate).toList());
        // Off, on, then the disk's own (off) again.
        assertEquals(List.of(false, true, false), seen);
        assertEquals(io.kickplug.api.poll.PollParams.DEFAULT_MAX_NS, disks.pollStatus("d2").params().maxNs());
        assertTrue(r.samples().stream().allMatch(s -> s.ios() > 0 && s.errors().isEmpty()), r.samples().toString());
    }

    @Test
    void aStrategyThatGoesAwayUnderVerifyIOFallsBackToImmediateAndLosesNothing() throws Exception {
        EndOfBatch plugin = new EndOfBatch();
        notifiers.add("end-of-batch", plugin, 0, 7);
        attach("d1", 2);
        disks.setStrategy("d1", "end-of-batch", -1);
        FioReport report;
        try (GuestMachine machine = engine.boot(disks.port("d1"), virtqueues, engine.defaults("d1"))) {
            CompletableFuture<FioReport> job = CompletableFuture.supplyAsync(() -> FioRunner.run(machine, "d1",
                    Fio.parse(List.of("--rw=randwrite", "--bs=4k", "--size=4m", "--iodepth=32", "--ioengine=libaio",
                            "--verify=crc32c", "--name=v0", "--offset=0", "--name=v1", "--offset=4m")).jobs()));
            // Wait for the job to be well under way on the plugin's strategy, then the plugin goes (its bundle
            // uninstalled: the disk manager unbinds the service).
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (requests("d1") < 500 && !job.isDone() && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
            assertTrue(!job.isDone(), "the job is still running when the strategy goes");
            assertTrue(disks.counters("d1").stream().allMatch(q -> q.strategy().equals("end-of-batch")));
            notifiers.remove(plugin);
            List<QueueCounters> now = disks.counters("d1");
            assertTrue(now.stream().allMatch(q -> q.strategy().equals("immediate")
                    && q.configured().equals("end-of-batch")), now.toString());
            report = job.get(120, TimeUnit.SECONDS);
        }
        assertTrue(!report.failed(), String.join("\n", report.errorLines()));
        long ios = report.jobs().stream().mapToLong(j -> j.write().ios() + j.read().ios()).sum();
        assertEquals(2 * 2 * (4L << 20) / 4096, ios, "every block written and read back, once each");
        // The plugin comes back: the disk's configured strategy applies again.
        notifiers.add("end-of-batch", plugin, 0, 8);
        assertTrue(disks.counters("d1").stream().allMatch(q -> q.strategy().equals("end-of-batch")),
                disks.counters("d1").toString());
    }

    private long requests(String disk) {
        return disks.counters(disk).stream().mapToLong(QueueCounters::requests).sum();
    }
}
