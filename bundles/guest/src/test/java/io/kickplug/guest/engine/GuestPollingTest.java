package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.guest.testing.Closer;
import io.kickplug.guest.testing.MemoryDisk;
import io.kickplug.guest.virtio.DriverConfig;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Driver-side polling (seed 003) against the real MMIO transport, split rings and virtio-blk device: poll
 * queues that never interrupt, and the toggling mode that turns a queue's callbacks off while hipri I/O is in
 * flight (VIRTIO 1.2 section 2.7.7: avail.flags NO_INTERRUPT, or used_event with EVENT_IDX).
 */
class GuestPollingTest {
    private static final long DISK = 16 << 20;
    private static final Duration RUN = Duration.ofSeconds(60);
    private static final int AVAIL_F_NO_INTERRUPT = 1;
    private static final long NO_EVENT_IDX = DriverConfig.SUPPORTED_FEATURES & ~VirtioFeatures.RING_EVENT_IDX;

    @RegisterExtension
    final Closer opened = new Closer();
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();
    private MemoryDisk disk;
    private VcpuMachine machine;

    private void boot(int queues, MachineConfig config) {
        disk = MemoryDisk.open(opened, kind(), "p", DISK, queues, 256);
        machine = opened.add((VcpuMachine) engine.boot(disk.transport().port(), new VirtqueueFactoryComponent(),
                config));
    }

    /** The transport the tests run on. */
    TransportKind kind() {
        return TransportKind.MMIO;
    }

    private static MachineConfig config(int vcpus) {
        return MachineConfig.defaults("p").withVcpus(vcpus).withLatencies(1_000, 500);
    }

    private int availFlags(int q) {
        return disk.memory().readU16(machine.driver().queue(q).layout().availRing()) & 0xFFFF;
    }

    /** used_event: the u16 after the avail ring's entries (section 2.7.6). */
    private int usedEvent(int q) {
        QueueLayout l = machine.driver().queue(q).layout();
        return disk.memory().readU16(l.availRing() + 4 + 2L * l.size()) & 0xFFFF;
    }

    private int usedIdx(int q) {
        return disk.memory().readU16(machine.driver().queue(q).layout().usedRing() + 2) & 0xFFFF;
    }

    private static void assertClean(BlockJob job) {
        assertEquals(List.of(), job.errors);
        assertTrue(job.finished);
        assertEquals(job.blocks, job.completed);
    }

    @Test
    void pollQueuesGetNoInterruptsAndCompleteEverything() {
        boot(2, config(2).withPollQueues(1).withFeatures(NO_EVENT_IDX));
        assertEquals(2, machine.numQueues());
        assertEquals(1, machine.driver().pollQueues(), "queue 1 is the poll queue");
        // Section 2.7.7: a poll queue asks for no interrupt, from before its first buffer.
        assertEquals(AVAIL_F_NO_INTERRUPT, availFlags(1));
        BlockJob writes = new BlockJob(IoOp.WRITE, 0, 500, 4096, 8, true);
        BlockJob reads = new BlockJob(IoOp.READ, 0, 500, 4096, 8, true);
        machine.runJobs(List.of(writes, new BlockJob(IoOp.WRITE, 600, 300, 4096, 4)), RUN);
        assertClean(writes);
        RunResult r = machine.runJobs(List.of(reads), RUN);
        assertClean(reads);
        assertEquals(0, r.vcpus().get(0).interrupts(), "hipri reads were reaped by polling");
        assertEquals(500, r.vcpus().get(0).completions());
        List<QueueCounters> counters = disk.device().queueCounters();
        assertEquals(1000, counters.get(1).requests(), "every hipri request went to the poll queue");
        assertEquals(0, counters.get(1).interruptsSent(), "the device never interrupted for the poll queue");
        assertEquals(300, counters.get(0).requests(), "normal I/O stayed on queue 0");
        assertTrue(counters.get(0).interruptsSent() > 0, "queue 0 still interrupts");
        assertEquals(AVAIL_F_NO_INTERRUPT, availFlags(1), "callbacks stay off for good");
    }

    @Test
    void pollQueuesWithEventIdxKeepUsedEventBehind() {
        boot(2, config(1).withMaxQueues(2).withPollQueues(1));
        assertTrue((machine.features() & VirtioFeatures.RING_EVENT_IDX) != 0);
        BlockJob writes = new BlockJob(IoOp.WRITE, 0, 2000, 4096, 16, true); // 8 MiB of the 16 MiB disk
        RunResult r = machine.runJobs(List.of(writes), RUN);
        assertClean(writes);
        assertEquals(0, r.vcpus().get(0).interrupts(), "no vCPU handles the poll queue's interrupts");
        // The device's first decision after activation notifies unconditionally (QEMU's signalled_used_valid);
        // after that, used_event kept behind suppresses every interrupt.
        assertTrue(disk.device().queueCounters().get(1).interruptsSent() <= 1,
                disk.device().queueCounters().get(1).toString());
        // Section 2.7.7.2: used_event stays where disabling put it (one behind the first entry), far behind.
        assertEquals(0xFFFF, usedEvent(1));
        assertEquals(2000, usedIdx(1));
    }

    /** A job that submits one hipri read per step and looks at the ring while it is in flight and after. */
    private final class ToggleProbe implements GuestJob {
        final List<Integer> during = new ArrayList<>();
        final List<Integer> after = new ArrayList<>();
        final List<Integer> statuses = new ArrayList<>();
        final boolean eventIdx;
        final int rounds;
        int submitted;
        GuestBuffer buf;

        ToggleProbe(boolean eventIdx, int rounds) {
            this.eventIdx = eventIdx;
            this.rounds = rounds;
        }

        int state() {
            return eventIdx ? usedEvent(0) : availFlags(0);
        }

        @Override
        public void start(Vcpu v) {
            buf = v.allocate(4096);
        }

        @Override
        public boolean step(Vcpu v) {
            if (submitted == rounds) {
                return false;
            }
            int before = usedIdx(0);
            v.submit(IoOp.READ, 4096L * submitted, 4096, buf, true, (status, at) -> {
                statuses.add(status);
                after.add(state());
            });
            v.commit();
            // Still in flight: this vCPU reaps it only after step returns.
            during.add(eventIdx ? (state() - before) & 0xFFFF : state());
            submitted++;
            return true;
        }

        @Override
        public void finish(Vcpu v) {
        }
    }

    @Test
    void togglingModeSetsNoInterruptWhileHipriIsInFlightAndClearsItAfter() {
        boot(1, config(1).withFeatures(NO_EVENT_IDX));
        assertEquals(0, machine.driver().pollQueues());
        ToggleProbe probe = new ToggleProbe(false, 50);
        RunResult r = machine.runJobs(List.of(probe), RUN);
        assertEquals(50, probe.statuses.size());
        probe.statuses.forEach(s -> assertEquals(VirtioBlk.S_OK, s));
        probe.during.forEach(f -> assertEquals(AVAIL_F_NO_INTERRUPT, f, "NO_INTERRUPT while hipri in flight"));
        probe.after.forEach(f -> assertEquals(0, f, "callbacks on once the last hipri request was reaped"));
        // Completions are reaped by polling, not by interrupts. The device may still send one when the vCPU
        // reaped and cleared NO_INTERRUPT before the device read the flags (without EVENT_IDX nothing orders the
        // two: the seed's cost of toggling), and such a late interrupt may find the next request's buffer.
        assertTrue(r.vcpus().get(0).interrupts() * 5 < 50, r.vcpus().get(0).toString());
    }

    @Test
    void togglingModeWithEventIdxMovesUsedEventOutOfTheWayAndBack() {
        boot(1, config(1));
        ToggleProbe probe = new ToggleProbe(true, 50);
        machine.runJobs(List.of(probe), RUN);
        assertEquals(50, probe.statuses.size());
        // Section 2.7.7.2: disabled, used_event is one behind the used index the driver has seen.
        probe.during.forEach(d -> assertEquals(0xFFFF, d, "used_event = used idx before the request - 1"));
        // Re-enabled: used_event is the driver's next expected used index.
        for (int i = 0; i < probe.after.size(); i++) {
            assertEquals(i + 1, probe.after.get(i), "used_event after request " + i);
        }
        // Completions are reaped by polling: interrupts are rare. The device's first decision after activation
        // is unconditional (QEMU's signalled_used_valid), and a device that reads used_event late (after the
        // driver reaped request i, re-enabled, and disabled again for request i + 1, moving used_event to i)
        // legitimately interrupts for request i: the race toggling pays for (seed 003). Seen: 2 in 50.
        assertTrue(disk.device().queueCounters().get(0).interruptsSent() * 5 < 50,
                disk.device().queueCounters().get(0).toString());
    }

    @Test
    void togglingModeLosesNoCompletionOfOtherVcpusSharingTheQueue() {
        boot(1, config(3).withFeatures(NO_EVENT_IDX));
        BlockJob hipri = new BlockJob(IoOp.WRITE, 0, 1500, 4096, 4, true);
        BlockJob normal1 = new BlockJob(IoOp.WRITE, 1500, 1500, 4096, 4);
        BlockJob normal2 = new BlockJob(IoOp.WRITE, 24000, 3000, 512, 8); // 12 MiB on
        RunResult r = machine.runJobs(List.of(hipri, normal1, normal2), RUN);
        assertClean(hipri);
        assertClean(normal1);
        assertClean(normal2);
        assertEquals(6000, r.vcpus().stream().mapToLong(VcpuStats::completions).sum());
        assertEquals(0, availFlags(0), "callbacks back on at the end");
        BlockJob check = new BlockJob(IoOp.READ, 0, 3000, 4096, 8); // the hipri and normal1 blocks
        machine.runJobs(List.of(check), RUN);
        assertClean(check);
    }

    @Test
    void pollQueuesAtMostAllButOne() {
        boot(1, config(1).withPollQueues(4));
        assertEquals(1, machine.numQueues());
        assertEquals(0, machine.driver().pollQueues(), "Linux: min(poll_queues, num_vqs - 1)");
        BlockJob job = new BlockJob(IoOp.WRITE, 0, 100, 4096, 4, true);
        machine.runJobs(List.of(job), RUN);
        assertClean(job);
    }
}
