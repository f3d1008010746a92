package io.kickplug.batching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.notify.NotifierRegistry;
import io.kickplug.guest.engine.GuestMachine;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.guest.fio.Fio;
import io.kickplug.guest.fio.FioInvocation;
import io.kickplug.guest.fio.FioReport;
import io.kickplug.guest.fio.FioRunner;
import io.kickplug.guest.fio.JobResult;
import io.kickplug.poll.AdaptivePollPolicy;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The notification protocol end to end (issue 12): every completion-notification strategy, EVENT_IDX on and off
 * and device-side polling on and off, with the simulated guest on the virtio-mmio transport, 2 queues on one I/O
 * thread. Passes of fio write-and-verify jobs at random depths (1 to 32, so the device both batches and sleeps
 * after every request), a random block size per pass and random VM-exit and interrupt-injection costs (the gaps between a
 * request and the next differ from pass to pass), with a random pause between passes (the device and its poll
 * window go idle). Every request completes: each job's I/O count is exact, verify passes, nothing stays in
 * flight. A lost kick or interrupt makes a job time out (the guest's 10 s request timeout).
 *
 * <p>Requests per case: {@code -Dkickplug.notify.stress.requests} (default 10,000, so 12 cases stay around a
 * minute in CI); {@code -Dkickplug.notify.stress.requests=1000000} for a long run.
 */
class NotificationProtocolStressTest {

    private static final int REQUESTS = Integer.getInteger("kickplug.notify.stress.requests", 10_000);
    private static final String DISK = "nps";
    /** One size per pass (verify with random writes needs one block size); the pass draws it. */
    private static final String[] BLOCK_SIZES = {"512", "4k", "16k"};

    private final NotifierRegistry notifiers = new NotifierRegistry();
    private final DiskRegistry disks = new DiskRegistry(new TransportFactoryComponent(new VirtqueueFactoryComponent()),
            new IoThreadFactoryComponent(), new GuestMemoryFactoryComponent(),
            () -> List.of(new MemoryBackendFactory()), notifiers);
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();
    private final VirtqueueFactoryComponent virtqueues = new VirtqueueFactoryComponent();

    static Stream<Arguments> cases() {
        List<Arguments> all = new ArrayList<>();
        for (String strategy : List.of(CompletionNotifier.IMMEDIATE, BottomHalfNotifier.NAME, DeferCallNotifier.NAME)) {
            for (boolean eventIdx : new boolean[] {true, false}) {
                for (boolean polling : new boolean[] {false, true}) {
                    all.add(Arguments.of(strategy, eventIdx, polling));
                }
            }
        }
        return all.stream();
    }

    @AfterEach
    void tearDown() {
        disks.close();
    }

    @ParameterizedTest(name = "{0} event_idx={1} polling={2}")
    @MethodSource("cases")
    void everyRequestCompletes(String strategy, boolean eventIdx, boolean polling) throws Exception {
        notifiers.add(BottomHalfNotifier.NAME, new BottomHalfNotifier(), 0, 1);
        notifiers.add(DeferCallNotifier.NAME, new DeferCallNotifier(), 0, 2);
        disks.attach(new DiskSpec(DISK, new BackendSpec("memory", null, 16L << 20, false), TransportKind.MMIO, 2,
                DiskSpec.DEFAULT_QUEUE_SIZE, 1, null, DiskSpec.DEFAULT_GUEST_MEMORY));
        disks.setStrategy(DISK, strategy, -1);
        if (polling) {
            disks.device(DISK).setPollPolicy(new AdaptivePollPolicy());
            disks.setPolling(DISK, true, PollParams.defaults());
        }
        MachineConfig base = MachineConfig.defaults(DISK).withVcpus(2).withTimeout(Duration.ofSeconds(10));
        long features = base.supportedFeatures();
        base = base.withFeatures(eventIdx ? features | VirtioFeatures.RING_EVENT_IDX
                : features & ~VirtioFeatures.RING_EVENT_IDX);
        SplittableRandom random = new SplittableRandom(strategy.hashCode() * 4L + (eventIdx ? 2 : 0) + (polling ? 1 : 0));
        long ios = 0;
        int passes = 0;
        while (ios < REQUESTS) {
            int depthA = 1 + random.nextInt(32);
            int depthB = random.nextInt(3) == 0 ? 1 : 1 + random.nextInt(32);
            List<String> args = List.of("--rw=randwrite", "--bs=" + BLOCK_SIZES[random.nextInt(BLOCK_SIZES.length)], "--size=256k", "--ioengine=libaio",
                    "--verify=crc32c", "--randseed=" + random.nextInt(1 << 20),
                    "--name=a", "--offset=0", "--iodepth=" + depthA,
                    "--name=b", "--offset=4m", "--iodepth=" + depthB);
            MachineConfig config = base.withLatencies(random.nextInt(4) == 0 ? 0 : random.nextInt(30_000),
                    random.nextInt(4) == 0 ? 0 : random.nextInt(30_000));
            FioReport report;
            try (GuestMachine machine = engine.boot(disks.port(DISK), virtqueues, config)) {
                report = FioRunner.run(machine, DISK, Fio.parse(args).jobs());
            }
            assertTrue(!report.failed(), "pass " + passes + " failed: "
                    + Fio.format(report, FioInvocation.OutputFormat.NORMAL));
            for (JobResult job : report.jobs()) {
                assertEquals(0, job.error(), job.name() + ": " + job.errors());
                assertTrue(job.write().ios() > 0, job.name() + " wrote");
                assertEquals(job.write().ios(), job.read().ios(), job.name() + ": every written block verified");
                ios += job.write().ios() + job.read().ios();
            }
            passes++;
            TimeUnit.MICROSECONDS.sleep(random.nextInt(3_000)); // idle: the device sleeps, the poll window ends
        }
        for (QueueCounters c : disks.counters(DISK)) {
            assertEquals(0, c.inFlight(), "queue " + c.queue());
            assertEquals(strategy, c.strategy(), "queue " + c.queue());
        }
        assertEquals(0, disks.device(DISK).stats().requestsInFlight());
        assertTrue(disks.device(DISK).stats().requestsCompleted() >= ios, "the device completed what fio counted");
    }
}
