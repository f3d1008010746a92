package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.guest.testing.EndOfBatchNotifier;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.notify.NotifierRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import io.kickplug.guest.fio.FioReport;
import io.kickplug.guest.fio.FioRunner;
import io.kickplug.guest.fio.JobFileParser;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Seed 002's mechanism in virtual time: every interrupt the device sends is a scheduling point (charged its irqfd
 * write), so a vCPU handles it while the device goes on completing the same batch. With EVENT_IDX the driver then
 * moves {@code used_event} on mid-batch, and a strategy that decides per used buffer (immediate) notifies again
 * within the batch, where one that decides once at the end of the batch (defer-call's shape) does not. Model
 * charging: the same figures on any host.
 */
class VirtualInterruptTest {

    private final NotifierRegistry notifiers = new NotifierRegistry();
    private final DiskRegistry registry = InProcessHost.registry(notifiers);
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();

    @AfterEach
    void tearDown() {
        registry.close();
    }

    /** Interrupts sent per request completed, 4 vCPUs and 4 queues, randread iodepth 32, 5 ms of virtual time. */
    private double interruptsPerRequest(String strategy) {
        VirtualTime time = new VirtualTime(3, Charging.MODEL, ModelCosts.DEFAULTS, true);
        String name = "irq-" + strategy;
        DiskSpec spec = DiskSpec.memory(name, 8L << 20).withBackend(new BackendSpec("null", null, 8L << 20, false))
                .withTransport(TransportKind.PCI).withQueues(4, 256);
        registry.attach(spec, time);
        try {
            time.deviceWork(() -> registry.counters(name).stream().mapToLong(QueueCounters::requests).sum());
            registry.setStrategy(name, strategy, NotificationControl.ALL_QUEUES);
            MachineConfig config = engine.defaults(name).withVcpus(4);
            List<QueueCounters> counters;
            FioReport report;
            try (GuestMachine machine = engine.boot(registry.port(name), new VirtqueueFactoryComponent(), config,
                    time)) {
                report = FioRunner.run(machine, name, JobFileParser.parse("[global]\nbs=4k\nioengine=libaio\n"
                        + "iodepth=32\nnumjobs=4\nruntime=5ms\ntime_based\ngroup_reporting=1\n[r]\nrw=randread\n"));
                counters = registry.counters(name);
            }
            assertFalse(report.failed(), String.join("; ", report.errorLines()));
            long requests = counters.stream().mapToLong(QueueCounters::requests).sum();
            long sent = counters.stream().mapToLong(QueueCounters::interruptsSent).sum();
            assertTrue(requests > 0, strategy);
            assertTrue(counters.stream().allMatch(c -> c.strategy().equals(strategy)), counters.toString());
            return (double) sent / requests;
        } finally {
            registry.detach(name);
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aVcpuHandlesAnInterruptMidBatchSoImmediateNotifiesMoreOftenThanEndOfBatch() {
        notifiers.add("defer-call", new EndOfBatchNotifier(), 0, 1);
        double immediate = interruptsPerRequest(CompletionNotifier.IMMEDIATE);
        double batched = interruptsPerRequest("defer-call");
        assertTrue(immediate > batched, "immediate " + immediate + " irqs/req, end of batch " + batched);
    }
}
