package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import io.kickplug.guest.fio.FioReport;
import io.kickplug.guest.fio.FioRunner;
import io.kickplug.guest.fio.JobFileParser;
import io.kickplug.guest.fio.JobResult;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Virtual time ({@link VirtualTime}) with model-only charging: the same experiment with the same seed gives the
 * same counters, however the host schedules the threads. Measured charging ({@link Charging#MEASURED})
 * charges the CPU time the code took, which varies from run to run, so only the model is deterministic.
 */
class VirtualTimeDeterminismTest {

    private final DiskRegistry registry = InProcessHost.registry();
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();

    @AfterEach
    void tearDown() {
        registry.close();
    }

    /**
     * Everything one run counted, in a form equals() compares. Not the scheduler's hand-offs: the boot and the
     * detach run from the test's thread, outside virtual time, and hand the baton a varying number of times.
     */
    record Counters(long ios, long runtimeNanos, long deviceRequests,
            long interruptsSent, long avail, List<String> locks, long latencyMeanNanos) {
    }

    private Counters run(long seed, boolean ioeventfd, String kick) {
        VirtualTime time = new VirtualTime(seed, Charging.MODEL, ModelCosts.DEFAULTS, ioeventfd);
        String name = "vt" + seed + (ioeventfd ? "on" : "off") + kick;
        DiskSpec spec = DiskSpec.memory(name, 8L << 20).withBackend(new BackendSpec("null", null, 8L << 20, false))
                .withTransport(TransportKind.MMIO);
        registry.attach(spec, time);
        try {
            time.deviceWork(() -> registry.counters(name).stream().mapToLong(QueueCounters::requests).sum());
            MachineConfig config = engine.defaults(name).withVcpus(4).withLatencies(10_000, 2_000)
                    .withKickPolicy(kick);
            FioReport report;
            List<LockStatRow> rows;
            List<QueueCounters> counters;
            // Everything is read before the machine closes: closing ends the virtual time, and the vCPUs and I/O
            // threads then run freely (a vCPU finishing its loop iteration may take the vq lock once more).
            try (GuestMachine machine = engine.boot(registry.port(name), new VirtqueueFactoryComponent(), config,
                    time)) {
                engine.locks().reset();
                report = FioRunner.run(machine, name, JobFileParser.parse("[global]\nbs=4k\nioengine=libaio\n"
                        + "iodepth=16\nnumjobs=4\nruntime=20ms\ntime_based\ngroup_reporting=1\n[r]\nrw=randread\n"));
                rows = engine.locks().rows();
                counters = registry.counters(name);
            }
            assertFalse(report.failed(), String.join("; ", report.errorLines()));
            JobResult all = JobResult.merge(report.jobs());
            List<String> locks = new ArrayList<>();
            for (LockStatRow r : rows) {
                if (r.name().startsWith(name + " ")) {
                    locks.add(r.name() + " " + r.contentions() + " " + r.acquisitions() + " " + r.holdtimeMaxNs() + " "
                            + r.waittimeTotalNs());
                }
            }
            long requests = 0;
            long sent = 0;
            long avail = 0;
            for (QueueCounters c : counters) {
                requests += c.requests();
                sent += c.interruptsSent();
                avail += c.availNotifications();
            }
            return new Counters(all.read().ios(), all.runtimeNanos(), requests, sent, avail,
                    locks, Math.round(all.read().lat().mean()));
        } finally {
            registry.detach(name);
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theSameSeedGivesTheSameCountersWithIoeventfdOnAndOff() {
        for (boolean ioeventfd : List.of(true, false)) {
            Counters first = run(42, ioeventfd, "under-lock");
            Counters second = run(42, ioeventfd, "under-lock");
            assertTrue(first.ios() > 0, first.toString());
            assertEquals(first, second, "ioeventfd " + ioeventfd);
        }
    }
}
