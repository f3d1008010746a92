package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.guest.KickPolicy;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.kick.OutsideLockKick;
import io.kickplug.guest.kick.UnderLockKick;
import io.kickplug.guest.testing.Closer;
import io.kickplug.guest.testing.MemoryDisk;
import io.kickplug.guest.testing.RamDiskDevice;
import io.kickplug.api.transport.TransportInstance;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.guest.transport.InterruptRouting;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The engine against the real virtio-mmio transport, split virtqueues and virtio-blk device (memory
 * backend, one I/O thread): registers, guest memory and interrupts only. {@link GuestMachinePciTest} runs
 * every test again on virtio-pci.
 */
class GuestMachineTest {
    private static final long DISK = 4 << 20;
    private static final Duration RUN = Duration.ofSeconds(60);

    @RegisterExtension
    final Closer opened = new Closer();
    private final StandardGuestEngine engine = StandardGuestEngine.standalone();
    private MemoryDisk disk;
    private TransportInstance transport;
    private GuestMachine machine;

    /** The transport the tests run on. */
    TransportKind kind() {
        return TransportKind.MMIO;
    }

    private TransportInstance device(int queues, int queueSize) {
        disk = MemoryDisk.open(opened, kind(), "t", DISK, queues, queueSize);
        transport = disk.transport();
        return transport;
    }

    private GuestMachine boot(MachineConfig config) {
        machine = opened.add(engine.boot(transport.port(), new VirtqueueFactoryComponent(), config));
        return machine;
    }

    private static MachineConfig config(int vcpus) {
        return MachineConfig.defaults("d1").withVcpus(vcpus).withLatencies(1_000, 500);
    }

    private static void assertClean(BlockJob job) {
        assertEquals(List.of(), job.errors);
        assertTrue(job.finished);
        assertEquals(job.blocks, job.completed);
    }

    /** Runs {@code job} alone and checks that every block of it completed without error. */
    private RunResult runClean(BlockJob job) {
        RunResult r = machine.runJobs(List.of(job), RUN);
        assertClean(job);
        return r;
    }

    @Test
    void writesThenReadsBackOnFourVcpusSharingOneQueue() throws Exception {
        device(1, 256);
        boot(config(4));
        assertEquals(1, machine.numQueues());
        assertEquals(DISK, machine.capacityBytes());
        assertEquals(256, machine.queueDepth(0));
        List<BlockJob> writes = new ArrayList<>();
        for (int j = 0; j < 4; j++) {
            writes.add(new BlockJob(IoOp.WRITE, j * 64, 64, 4096, 8));
        }
        RunResult w = machine.runJobs(List.copyOf(writes), RUN);
        writes.forEach(GuestMachineTest::assertClean);
        assertEquals(4, w.vcpus().size());
        assertTrue(w.notifies() > 0);
        List<BlockJob> reads = new ArrayList<>();
        for (int j = 0; j < 4; j++) {
            reads.add(new BlockJob(IoOp.READ, j * 64, 64, 4096, 8));
        }
        machine.runJobs(List.copyOf(reads), RUN);
        reads.forEach(GuestMachineTest::assertClean);
        // The data is on the disk where it belongs: block 70 holds its pattern.
        ByteBuffer got = ByteBuffer.allocate(4096);
        disk.backend().read(70 * 4096L, new ByteBuffer[] {got});
        byte[] expected = new byte[4096];
        BlockJob.PATTERN.fill(70, expected, 4096);
        assertArrayEquals(expected, got.array());
    }

    @Test
    void completionsRunOnTheSubmittingVcpu() {
        device(1, 256);
        boot(config(3));
        List<BlockJob> jobs = List.of(new BlockJob(IoOp.WRITE, 0, 40, 4096, 4),
                new BlockJob(IoOp.WRITE, 100, 40, 4096, 4), new BlockJob(IoOp.WRITE, 200, 40, 4096, 4));
        RunResult r = machine.runJobs(List.copyOf(jobs), RUN);
        Set<Thread> vcpuThreads = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            BlockJob job = jobs.get(i);
            assertClean(job);
            assertEquals(i, job.vcpuId, "job i runs on vCPU i % vcpus");
            assertEquals(40, job.callbackThreads.size());
            job.callbackThreads.forEach(t -> assertSame(job.vcpuThread, t));
            vcpuThreads.add(job.vcpuThread);
        }
        assertEquals(3, vcpuThreads.size());
        // One queue: its interrupt goes to vCPU 0, which collects everybody's used buffers.
        assertEquals(120, r.vcpus().get(0).completions());
        assertEquals(0, r.vcpus().get(1).completions());
        assertEquals(0, r.vcpus().get(2).interrupts());
    }

    @Test
    void interruptsOfQueueQGoToVcpuQModVcpus() {
        device(2, 256);
        boot(config(4));
        assertEquals(2, machine.numQueues());
        List<BlockJob> jobs = new ArrayList<>();
        for (int j = 0; j < 4; j++) {
            jobs.add(new BlockJob(IoOp.WRITE, j * 32, 32, 4096, 4));
        }
        RunResult r = machine.runJobs(List.copyOf(jobs), RUN);
        jobs.forEach(GuestMachineTest::assertClean);
        // blk-mq: vCPUs 0 and 2 submit to queue 0, vCPUs 1 and 3 to queue 1; queue q interrupts vCPU q.
        VcpuStats v0 = r.vcpus().get(0);
        VcpuStats v1 = r.vcpus().get(1);
        assertEquals(64, v0.completions());
        assertEquals(64, v1.completions());
        assertTrue(v0.interrupts() > 0 && v1.interrupts() > 0);
        for (int v = 2; v < 4; v++) {
            assertEquals(0, r.vcpus().get(v).interrupts(), "vCPU " + v + " owns no queue");
            assertEquals(0, r.vcpus().get(v).completions());
            assertEquals(0, r.vcpus().get(v).injectNanos());
        }
        for (int v = 0; v < 4; v++) {
            assertEquals(32, r.vcpus().get(v).requests());
        }
    }

    @Test
    void eachQueueVectorGoesToItsVcpuOnlyWithMsixAndTheLineToEveryQueueOwner() {
        device(4, 64);
        VcpuMachine m = (VcpuMachine) boot(config(2).withMaxQueues(4));
        assertEquals(4, m.numQueues());
        InterruptRouting r = m.driver().routing();
        if (kind() == TransportKind.PCI) {
            // Linux's vp_find_vqs: config on vector 0, queue q on vector q + 1; its affinity is vCPU q % vcpus.
            assertEquals(InterruptRouting.Mode.MSIX_PER_QUEUE, r.mode());
            for (int q = 0; q < 4; q++) {
                assertEquals(q + 1, r.queueVector(q));
                assertEquals(List.of(q % 2), m.interrupts.targets(q + 1), "queue " + q + "'s vector");
            }
            assertEquals(List.of(0), m.interrupts.targets(0), "the configuration vector goes to queue 0's vCPU");
        } else {
            // virtio-mmio has one line: every vCPU that owns a queue sees every raise.
            assertEquals(InterruptRouting.Mode.LINE, r.mode());
            assertEquals(List.of(0, 1), m.interrupts.targets(0));
        }
        assertEquals(List.of(), m.interrupts.targets(9), "an unmapped vector reaches nobody");
        List<BlockJob> jobs = List.of(new BlockJob(IoOp.WRITE, 0, 64, 4096, 8),
                new BlockJob(IoOp.WRITE, 256, 64, 4096, 8));
        RunResult run = m.runJobs(List.copyOf(jobs), RUN);
        jobs.forEach(GuestMachineTest::assertClean);
        assertEquals(64, run.vcpus().get(0).completions());
        assertEquals(64, run.vcpus().get(1).completions());
    }

    @Test
    void thePolicyIsCalledOncePerCommitNotPerRequest() {
        device(1, 256);
        List<Integer> kicks = new ArrayList<>();
        AtomicInteger prepared = new AtomicInteger();
        engine.policies().add("counting", q -> {
            kicks.add(q.index());
            boolean notify = q.kickPrepare();
            if (notify) {
                prepared.incrementAndGet();
            }
            q.unlock();
            if (notify) {
                q.notifyDevice();
            }
        });
        boot(config(1).withKickPolicy("counting"));
        // 16 in flight, so each step after the first submits a few; one commit per step.
        BlockJob job = new BlockJob(IoOp.WRITE, 0, 128, 4096, 16);
        RunResult r = runClean(job);
        assertEquals(job.commits, kicks.size(), "the policy runs once per commit (bd->last)");
        assertTrue(kicks.size() < 128, "fewer kicks than requests: " + kicks.size());
        assertEquals(prepared.get(), r.notifies(), "a notify only when kickPrepare asked for one");
    }

    @Test
    void aJobThatForgetsToCommitIsDispatchedWhenItsStepReturns() {
        device(1, 64);
        boot(config(1));
        GuestJob forgetful = new GuestJob() {
            GuestBuffer buf;
            int done;
            boolean submitted;

            @Override
            public void start(Vcpu v) {
                buf = v.allocate(4096);
            }

            @Override
            public boolean step(Vcpu v) {
                if (!submitted) {
                    submitted = true;
                    v.submit(IoOp.WRITE, 0, 4096, buf, false, (s, t) -> done++);
                }
                return done == 0;
            }

            @Override
            public void finish(Vcpu v) {
            }
        };
        RunResult r = machine.runJobs(List.of(forgetful), RUN);
        assertEquals(1, r.vcpus().get(0).requests());
    }

    @Test
    void underLockHoldsTheVqLockAcrossTheExitAndOutsideLockDoesNot() throws Exception {
        // 50 ms: far above any other hold time of a vq lock, even with the host's scheduling noise.
        long exit = 50_000_000;
        LockStatRow under = measuredHolds(UnderLockKick.NAME, exit);
        assertTrue(under.holdtimeMaxNs() >= exit, "under-lock max hold " + under.holdtimeMaxNs());
        LockStatRow outside = measuredHolds(OutsideLockKick.NAME, exit);
        assertTrue(outside.acquisitions() > 0);
        assertTrue(outside.holdtimeMaxNs() < exit, "outside-lock max hold " + outside.holdtimeMaxNs());
    }

    /** The vq lock's row after 4 writes at depth 1 with {@code policy}, past a warm-up write. */
    private LockStatRow measuredHolds(String policy, long exit) throws Exception {
        opened.closeAll();
        device(1, 256);
        boot(config(1).withLatencies(exit, 0).withKickPolicy(policy).withName(policy));
        machine.runJobs(List.of(new BlockJob(IoOp.WRITE, 100, 1, 4096, 1)), RUN);
        engine.locks().reset();
        RunResult r = machine.runJobs(List.of(new BlockJob(IoOp.WRITE, 0, 4, 4096, 1)), RUN);
        assertTrue(r.notifies() > 0);
        assertTrue(r.vcpus().get(0).exitNanos() >= r.notifies() * exit, "each notify costs the exit latency");
        return row(policy + " vq0");
    }

    private LockStatRow row(String name) {
        return engine.locks().rows().stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void locksAreCountedAndContendedWithSeveralVcpusOnOneQueue() {
        device(1, 256);
        boot(config(4).withKickPolicy(UnderLockKick.NAME).withLatencies(50_000, 1_000));
        List<GuestJob> jobs = new ArrayList<>();
        for (int j = 0; j < 4; j++) {
            jobs.add(new BlockJob(IoOp.WRITE, j * 64, 64, 4096, 8));
        }
        machine.runJobs(jobs, RUN);
        LockStatRow vq = row("d1 vq0");
        // Every request is added under the lock, and every handler run takes it: at least one each.
        assertTrue(vq.acquisitions() >= 256, vq.toString());
        assertTrue(vq.acqBounces() > 0, vq.toString());
        assertTrue(vq.holdtimeTotalNs() >= vq.holdtimeMaxNs() && vq.holdtimeMaxNs() >= vq.holdtimeMinNs());
        assertTrue(vq.contentions() >= vq.conBounces());
    }

    @Test
    void requestsAreSplitPerSegMax() {
        device(1, 8); // seg_max = queue size - 2 = 6 (VIRTIO 1.2 section 5.2.4)
        boot(config(1));
        assertEquals(6, ((VcpuMachine) machine).driver().segMax());
        RunResult r = runClean(new BlockJob(IoOp.WRITE, 0, 2, 8 * 4096, 1));
        assertEquals(4, r.vcpus().get(0).requests(), "two I/Os of 8 pages, each 6 + 2 pages");
        assertEquals(4, disk.device().stats().requestsCompleted());
        runClean(new BlockJob(IoOp.READ, 0, 2, 8 * 4096, 2));
    }

    @Test
    void withoutIndirectDescriptorsChainsWaitForFreeDescriptors() {
        device(1, 8);
        // 6-page requests need 8 descriptors each: one at a time in an 8-entry ring.
        boot(config(1).withFeatures(VirtioFeatures.VERSION_1 | VirtioBlk.F_SEG_MAX));
        runClean(new BlockJob(IoOp.WRITE, 0, 4, 6 * 4096, 4));
        runClean(new BlockJob(IoOp.READ, 0, 4, 6 * 4096, 4));
    }

    @Test
    void queueDepthLimitsTagsAndJobsWaitForThem() {
        device(1, 256);
        boot(config(2).withQueueDepth(2));
        assertEquals(2, machine.queueDepth(0));
        List<BlockJob> jobs = List.of(new BlockJob(IoOp.WRITE, 0, 32, 4096, 8),
                new BlockJob(IoOp.WRITE, 64, 32, 4096, 8));
        machine.runJobs(List.copyOf(jobs), RUN);
        jobs.forEach(GuestMachineTest::assertClean);
    }

    /** The message one submit of {@code length} bytes at {@code offset} is refused with, on a one-queue machine. */
    private String refusedSubmit(IoOp op, long offset, int length) {
        device(1, 64);
        boot(config(1));
        return assertThrows(IllegalArgumentException.class, () -> machine.runJobs(List.of(new OneShot(
                (v, buf) -> v.submit(op, offset, length, buf, false, (s, t) -> { }))), RUN)).getMessage();
    }

    @Test
    void badIoIsRefusedWithOneLine() {
        assertEquals("offset 100 must be a non-negative multiple of 512 (VIRTIO 1.2 section 5.2.6.1)",
                refusedSubmit(IoOp.READ, 100, 4096));
    }

    @Test
    void dataThatIsNotWholeSectorsIsRefused() {
        // Section 5.2.6.1: the data of IN and OUT requests is a multiple of 512 bytes.
        assertEquals("length 1000 must be a positive multiple of 512 within the 4096-byte buffer "
                + "(VIRTIO 1.2 section 5.2.6.1)", refusedSubmit(IoOp.WRITE, 0, 1000));
    }

    @Test
    void pastTheCapacityIsRefused() {
        assertEquals("I/O of 4096 bytes at offset 4192256 passes the capacity of 4194304 bytes",
                refusedSubmit(IoOp.READ, DISK - 2048, 4096));
    }

    @Test
    void aPolicyThatKeepsTheLockFailsTheRun() {
        device(1, 64);
        engine.policies().add("greedy", KickPolicy.Queue::kickPrepare);
        boot(config(1).withKickPolicy("greedy"));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> machine.runJobs(List.of(new BlockJob(IoOp.WRITE, 0, 1, 4096, 1)), RUN));
        assertEquals("kick policy greedy returned with the lock of queue 0 held", e.getMessage());
    }

    @Test
    void unknownPolicyIsRefusedAtBoot() {
        device(1, 64);
        assertEquals("no kick policy named 'nope' (available: outside-lock, under-lock)",
                assertThrows(IllegalArgumentException.class, () -> boot(config(1).withKickPolicy("nope")))
                        .getMessage());
    }

    @Test
    void aDeviceThatNeverCompletesTimesOut() {
        RamDiskDevice ram = new RamDiskDevice(1 << 20, 1, 64, RamDiskDevice.fullFeatures());
        try {
            transport = MemoryDisk.transport(opened, kind(), ram, OffHeapGuestMemory.allocate(4 << 20));
            ram.swallow = true;
            boot(config(1).withTimeout(Duration.ofMillis(300)));
            GuestDriverException e = assertThrows(GuestDriverException.class,
                    () -> machine.runJobs(List.of(new BlockJob(IoOp.WRITE, 0, 4, 4096, 4)), RUN));
            assertTrue(e.getMessage().startsWith("no completion within 300 ms (4 requests in flight on vcpu 0"),
                    e.getMessage());
            machine.close();
            assertEquals(0, transport.deviceStatus(), "closing resets the device");
        } finally {
            ram.close();
        }
    }

    @Test
    void flushReachesTheDevice() {
        device(1, 64);
        boot(config(1));
        assertTrue(machine.hasFlush());
        int[] status = {-1};
        machine.runJobs(List.of(new OneShot((v, buf) -> v.submit(IoOp.FLUSH, 0, 0, null, false,
                (s, t) -> status[0] = s))), RUN);
        assertEquals(VirtioBlk.S_OK, status[0]);
        assertEquals(1, disk.device().stats().requestsCompleted());
    }

    /** Submits once from start, then waits for it. */
    private static final class OneShot implements GuestJob {
        interface Action {
            void run(Vcpu v, GuestBuffer buf);
        }

        private final Action action;

        OneShot(Action action) {
            this.action = action;
        }

        @Override
        public void start(Vcpu v) {
            action.run(v, v.allocate(4096));
        }

        @Override
        public boolean step(Vcpu v) {
            return false;
        }

        @Override
        public void finish(Vcpu v) {
        }
    }
}
