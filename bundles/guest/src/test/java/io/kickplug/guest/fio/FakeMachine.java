package io.kickplug.guest.fio;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.guest.engine.GuestBuffer;
import io.kickplug.guest.engine.GuestJob;
import io.kickplug.guest.engine.GuestMachine;
import io.kickplug.guest.engine.IoCallback;
import io.kickplug.guest.engine.IoOp;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.RunResult;
import io.kickplug.guest.engine.Vcpu;
import io.kickplug.guest.engine.VcpuStats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A deterministic stand-in for the guest engine: one thread runs every job round-robin; a commit executes
 * the round's I/O against a byte array and queues the callbacks, which run after the job's step returns
 * (never inside it), as the engine's contract says. It checks the contract the way the real driver does:
 * offsets and lengths in 512-byte units, inside the disk, no commit without submissions, a step that
 * submits nothing while nothing is in flight and does not finish is a hang.
 */
final class FakeMachine implements GuestMachine {

    final byte[] disk;
    final MachineConfig config;
    final List<String> ops = new ArrayList<>();
    long commits;
    long submits;
    int maxInFlight;
    /** Runs before every READ is executed, with its offset: a test may corrupt the disk there. */
    Consumer<Long> beforeRead = offset -> { };
    /** Status for every I/O (VirtioBlk.S_OK unless a test wants errors). */
    int status = VirtioBlk.S_OK;

    FakeMachine(int capacity, int vcpus) {
        this.disk = new byte[capacity];
        this.config = MachineConfig.defaults("fake").withVcpus(vcpus);
    }

    @Override
    public MachineConfig config() {
        return config;
    }

    @Override
    public long capacityBytes() {
        return disk.length;
    }

    @Override
    public int numQueues() {
        return 1;
    }

    @Override
    public int queueDepth(int queue) {
        return 256;
    }

    @Override
    public boolean readOnly() {
        return false;
    }

    @Override
    public boolean hasFlush() {
        return true;
    }

    @Override
    public long features() {
        return 0;
    }

    private final class FakeVcpu implements Vcpu {
        final int id;
        final ArrayDeque<Runnable> pendingSubmit = new ArrayDeque<>();
        final ArrayDeque<Runnable> completions = new ArrayDeque<>();
        int inFlight;

        FakeVcpu(int id) {
            this.id = id;
        }

        @Override
        public int id() {
            return id;
        }

        @Override
        public int queue() {
            return 0;
        }

        @Override
        public GuestBuffer allocate(int bytes) {
            ByteBuffer memory = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
            return new GuestBuffer() {
                @Override
                public long address() {
                    return 0x1000;
                }

                @Override
                public int size() {
                    return bytes;
                }

                @Override
                public ByteBuffer view() {
                    return memory.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
                }
            };
        }

        @Override
        public void submit(IoOp op, long offset, int length, GuestBuffer buf, boolean hipri, IoCallback cb) {
            if (offset % 512 != 0 || length <= 0 || length % 512 != 0 || offset + length > disk.length
                    || length > buf.size()) {
                throw new IllegalArgumentException("bad I/O " + op + " " + offset + "+" + length);
            }
            submits++;
            inFlight++;
            maxInFlight = Math.max(maxInFlight, inFlight);
            ops.add(op + " " + offset + " " + length);
            pendingSubmit.add(() -> {
                ByteBuffer view = buf.view();
                if (op == IoOp.READ) {
                    beforeRead.accept(offset);
                    view.put(disk, (int) offset, length);
                } else {
                    view.get(disk, (int) offset, length);
                }
                completions.add(() -> {
                    inFlight--;
                    cb.done(status, System.nanoTime());
                });
            });
        }

        @Override
        public void commit() {
            if (pendingSubmit.isEmpty()) {
                throw new IllegalStateException("commit without submissions");
            }
            commits++;
            while (!pendingSubmit.isEmpty()) {
                pendingSubmit.poll().run();
            }
        }

        @Override
        public int inFlight() {
            return inFlight;
        }

        @Override
        public long nowNanos() {
            return System.nanoTime();
        }
    }

    @Override
    public RunResult runJobs(List<GuestJob> jobs, Duration timeout) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        List<FakeVcpu> vcpus = new ArrayList<>();
        for (int i = 0; i < config.vcpus(); i++) {
            vcpus.add(new FakeVcpu(i));
        }
        int n = jobs.size();
        boolean[] running = new boolean[n];
        boolean[] finished = new boolean[n];
        for (int i = 0; i < n; i++) {
            jobs.get(i).start(vcpus.get(i % vcpus.size()));
        }
        int done = 0;
        java.util.Arrays.fill(running, true);
        while (done < n) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("fake machine: timeout");
            }
            for (int i = 0; i < n; i++) {
                if (finished[i]) {
                    continue;
                }
                FakeVcpu v = vcpus.get(i % vcpus.size());
                if (running[i]) {
                    running[i] = jobs.get(i).step(v);
                    if (running[i] && v.completions.isEmpty() && v.inFlight == 0) {
                        throw new IllegalStateException("job " + i + " hangs: it runs, submitted nothing and has"
                                + " nothing in flight");
                    }
                }
                while (!v.completions.isEmpty()) {
                    v.completions.poll().run();
                }
                if (!running[i] && v.inFlight == 0) {
                    jobs.get(i).finish(v);
                    finished[i] = true;
                    done++;
                }
            }
        }
        List<VcpuStats> stats = new ArrayList<>();
        for (FakeVcpu v : vcpus) {
            stats.add(new VcpuStats(v.id, 0, 0, 0, commits, commits, submits, submits));
        }
        return new RunResult(System.nanoTime() - start, stats);
    }

    @Override
    public void close() {
    }
}
