package io.kickplug.guest.fio;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.guest.engine.GuestBuffer;
import io.kickplug.guest.engine.GuestJob;
import io.kickplug.guest.engine.IoOp;
import io.kickplug.guest.engine.Vcpu;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.SplittableRandom;

/**
 * One fio job as a state machine on its vCPU thread.
 *
 * <p>Main phase: each {@link #step} takes free I/O slots (iodepth of them for asynchronous engines, one for
 * synchronous ones) and submits an I/O per slot from the {@link OffsetGenerator}, committing every
 * {@code iodepth_batch_submit} of them (default 1, as in fio). The
 * phase ends when the region has been covered {@code loops} times (unless time based), when the runtime
 * has passed (counted after {@code ramp_time}), or at the first error.
 *
 * <p>Verify (fio's semantics): a job that writes with {@code verify} fills each written block with a
 * self-checking header and payload ({@link VerifyCodec}) and, once the main phase is over and its writes
 * have completed, reads every block it wrote back (in offset order, at the same depth) and checks it,
 * including that it is the last write this job made there. A read-only job with {@code verify} checks every
 * block it reads: the block must carry a valid header for that offset and length with a matching checksum,
 * i.e. have been written earlier by a write job with verify of the same block size (any seed). Reads of a
 * mixed job's main phase are not checked (they may race with its own writes); its writes are verified
 * after. The first failure stops the job with fio's err=84 (EILSEQ) and the failure's offset.
 *
 * <p>{@code do_verify=0} writes the verify headers but skips the verify phase; {@code verify_only=1} on a
 * writing job issues no writes: it replays the main phase's offsets and data seeds (same randseed, so the same
 * sequence) into the write log, then runs the verify phase, proving the disk still holds what an earlier run
 * of the same job wrote. On a read job verify_only changes nothing: it checks what it reads anyway.
 *
 * <p>Latencies as fio defines them: slat from issue to the end of the submission round (the commit), clat
 * from there to completion, lat from issue to completion. Synchronous engines have no separate submission:
 * no slat, and clat = lat. Only I/O issued after the ramp counts. CPU time is the vCPU thread's user and
 * system time over the job's life after the ramp, divided among the jobs that share the vCPU.
 */
public final class FioJob implements GuestJob {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private enum Phase {
        MAIN, VERIFY, DONE
    }

    /** One I/O slot: its buffer and the I/O it carries while in flight. */
    private static final class Slot {
        final GuestBuffer buffer;
        long offset;
        int length;
        boolean write;
        boolean verifying;
        long expectedSeed;
        boolean checkAnySeed;
        long issued;
        long submitted;
        boolean inFlight;

        Slot(GuestBuffer buffer) {
            this.buffer = buffer;
        }
    }

    private final JobSpec spec;
    private final JobSpec.Region region;
    private final String file;
    private final int sharers;
    private final JobResult result;
    private final OffsetGenerator generator;
    private final VerifyCodec codec;
    private final WriteLog log;
    private final SplittableRandom seeds;
    private final int depth;
    private final int batch;
    private final ArrayDeque<Slot> free = new ArrayDeque<>();
    private Slot[] slots;
    private Slot[] round;
    private Phase phase = Phase.MAIN;
    private OffsetGenerator.Io deferred;
    private int verifyCursor;
    private int inFlight;
    private long numberio;
    private long startNanos;
    private long statsStart;
    private long deadline;
    private boolean rampOver;
    private long cpuStart = -1;
    private long userStart = -1;
    private boolean failed;

    /**
     * @param file the name failures report (the job's filename, or the disk)
     * @param sharers jobs on the same vCPU, over which its CPU time is divided
     */
    public FioJob(JobSpec spec, JobSpec.Region region, String file, int sharers) {
        this.spec = spec;
        this.region = region;
        this.file = file;
        this.sharers = Math.max(1, sharers);
        this.result = new JobResult(spec.name(), 0);
        this.generator = OffsetGenerator.of(spec, region);
        this.codec = spec.verify() == VerifyKind.NONE ? null : new VerifyCodec(spec.verify());
        this.log = codec != null && spec.rw().writes() ? new WriteLog(region, spec.bsMin(), spec.bsMax()) : null;
        this.seeds = new SplittableRandom(OffsetGenerator.mix(spec.randseed() ^ 0x2545F4914F6CDD1DL));
        this.depth = spec.effectiveDepth();
        this.batch = spec.effectiveBatch();
    }

    public JobSpec spec() {
        return spec;
    }

    /** The job's outcome; complete once {@link #finish} ran. */
    public JobResult result() {
        return result;
    }

    @Override
    public void start(Vcpu v) {
        slots = new Slot[depth];
        round = new Slot[batch]; // one submission's slots
        SplittableRandom fill = new SplittableRandom(spec.randseed());
        for (int i = 0; i < depth; i++) {
            slots[i] = new Slot(v.allocate(spec.bsMax()));
            if (spec.rw().writes() && codec == null) {
                // Like fio without verify: write buffers hold random bytes, filled once.
                ByteBuffer view = slots[i].buffer.view();
                while (view.remaining() >= 8) {
                    view.putLong(fill.nextLong());
                }
            }
            free.add(slots[i]);
        }
        startNanos = v.nowNanos();
        statsStart = startNanos + spec.rampNanos();
        deadline = spec.runtimeNanos() > 0 ? statsStart + spec.runtimeNanos() : Long.MAX_VALUE;
        snapshotCpu();
        rampOver = spec.rampNanos() == 0;
        if (spec.verifyOnly() && log != null) {
            replayWrites();
        }
    }

    /** verify_only: records what the main phase would write, without writing, and goes to the verify phase. */
    private void replayWrites() {
        while (generator.passes() < spec.loops()) {
            OffsetGenerator.Io io = generator.next();
            if (io.write()) {
                long seed = seeds.nextLong();
                numberio++;
                log.record(io.offset(), io.length(), seed);
            }
        }
        phase = Phase.VERIFY;
    }

    @Override
    public boolean step(Vcpu v) {
        long now = v.nowNanos();
        if (!rampOver && now >= statsStart) {
            rampOver = true;
            snapshotCpu();
        }
        for (;;) {
            if (phase == Phase.MAIN && mainOver(now)) {
                if (log != null && !failed && spec.doVerify()) {
                    if (inFlight > 0) {
                        return true; // verify starts once every write has completed
                    }
                    phase = Phase.VERIFY;
                } else {
                    phase = Phase.DONE;
                }
            }
            if (phase == Phase.VERIFY && failed) {
                phase = Phase.DONE;
            }
            if (phase == Phase.DONE) {
                return false;
            }
            int n = submitRound(v, now);
            if (phase == Phase.VERIFY && verifyCursor < 0 && inFlight == 0) {
                phase = Phase.DONE;
                return false;
            }
            if (n > 0 || inFlight > 0) {
                return true;
            }
            // Nothing issued and nothing in flight: the phase is over; look again.
        }
    }

    /**
     * Issues I/O into every free slot the phase can fill, committing every {@code iodepth_batch_submit} of them
     * (fio's default 1: one submission per I/O, as fio's libaio engine makes an io_submit per I/O) and the rest at
     * the end; returns how many.
     */
    private int submitRound(Vcpu v, long now) {
        int n = 0;
        int queued = 0;
        while (n < depth && !free.isEmpty() && !failed) {
            Slot slot = phase == Phase.MAIN ? nextMain(now) : nextVerify();
            if (slot == null) {
                break;
            }
            slot.issued = v.nowNanos();
            slot.submitted = -1;
            slot.inFlight = true;
            inFlight++;
            n++;
            round[queued++] = slot;
            Slot s = slot;
            v.submit(s.write ? IoOp.WRITE : IoOp.READ, s.offset, s.length, s.buffer, spec.hipri(),
                    (status, completed) -> done(s, status, completed));
            if (queued == batch) {
                commit(v, queued);
                queued = 0;
            }
        }
        if (queued > 0) {
            commit(v, queued);
        }
        return n;
    }

    /** Ends a submission of the first {@code queued} slots of {@link #round}: their slat ends here. */
    private void commit(Vcpu v, int queued) {
        v.commit();
        long committed = v.nowNanos();
        for (int i = 0; i < queued; i++) {
            if (round[i].submitted < 0) {
                round[i].submitted = committed;
            }
            round[i] = null;
        }
    }

    private boolean mainOver(long now) {
        return failed || now >= deadline || deferred == null && !spec.timeBased()
                && generator.passes() >= spec.loops();
    }

    private Slot nextMain(long now) {
        if (mainOver(now)) {
            return null;
        }
        OffsetGenerator.Io io = deferred != null ? deferred : generator.next();
        deferred = null;
        if (log != null && io.write() && overlapsWriteInFlight(io)) {
            // fio's serialize_overlap: a block is never rewritten while an earlier write to it is in flight,
            // or verify could not know which of the two is on disk.
            deferred = io;
            return null;
        }
        Slot slot = free.poll();
        slot.offset = io.offset();
        slot.length = io.length();
        slot.write = io.write();
        slot.verifying = false;
        if (io.write() && codec != null) {
            long seed = seeds.nextLong();
            codec.fill(slot.buffer.view().limit(io.length()), io.offset(), seed, numberio++);
            log.record(io.offset(), io.length(), seed);
        } else if (!io.write() && codec != null && !spec.rw().writes()) {
            slot.verifying = true;
            slot.checkAnySeed = true;
        }
        return slot;
    }

    private boolean overlapsWriteInFlight(OffsetGenerator.Io io) {
        for (Slot s : slots) {
            if (s.inFlight && s.write && s.offset < io.offset() + io.length() && io.offset() < s.offset + s.length) {
                return true;
            }
        }
        return false;
    }

    private Slot nextVerify() {
        if (verifyCursor < 0) {
            return null;
        }
        int index = log.next(verifyCursor);
        if (index < 0) {
            verifyCursor = -1;
            return null;
        }
        verifyCursor = index + 1;
        Slot slot = free.poll();
        slot.offset = log.offset(index);
        slot.length = log.length(index);
        slot.write = false;
        slot.verifying = true;
        slot.checkAnySeed = false;
        slot.expectedSeed = log.seed(index);
        return slot;
    }

    private void done(Slot s, int status, long completed) {
        s.inFlight = false;
        inFlight--;
        long submitted = s.submitted < 0 ? completed : s.submitted;
        if (status != VirtioBlk.S_OK) {
            fail(JobResult.EIO, "io error: status " + status + " on " + (s.write ? "write" : "read") + " at file "
                    + file + " offset " + s.offset + ", length " + s.length);
        } else if (s.verifying && !failed) {
            String problem = codec.check(s.buffer.view().limit(s.length), s.offset,
                    s.checkAnySeed ? null : s.expectedSeed, file);
            if (problem != null) {
                fail(JobResult.EILSEQ, problem);
            }
        }
        if (s.issued >= statsStart) {
            DirectionStats d = s.write ? result.write() : result.read();
            long slat = spec.ioengine().async() ? submitted - s.issued : -1;
            long clat = spec.ioengine().async() ? completed - submitted : completed - s.issued;
            d.record(s.length, slat, clat, completed - s.issued);
            result.timeline().record(completed - Math.max(statsStart, startNanos));
        }
        free.push(s);
    }

    private void fail(int errno, String message) {
        if (!failed) {
            failed = true;
            result.fail(errno, message);
        }
    }

    @Override
    public void finish(Vcpu v) {
        long end = v.nowNanos();
        result.runtimeNanos(Math.max(0, end - Math.max(statsStart, startNanos)));
        if (cpuStart >= 0) {
            long cpu = THREADS.getCurrentThreadCpuTime() - cpuStart;
            long user = THREADS.getCurrentThreadUserTime() - userStart;
            result.cpu(Math.max(0, user) / sharers, Math.max(0, cpu - user) / sharers);
        }
    }

    private void snapshotCpu() {
        if (THREADS.isCurrentThreadCpuTimeSupported()) {
            cpuStart = THREADS.getCurrentThreadCpuTime();
            userStart = THREADS.getCurrentThreadUserTime();
        }
    }
}
