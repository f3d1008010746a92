package io.kickplug.guest.engine;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.guest.workload.BlockPattern;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A tiny in-test job: {@code blocks} I/Os of {@code bs} bytes from block {@code first} on, at most
 * {@code depth} in flight, one commit per step. Writes carry {@link BlockPattern} data; reads are checked
 * against it. Records which thread ran each callback and each error.
 */
final class BlockJob implements GuestJob {
    static final BlockPattern PATTERN = new BlockPattern(42);

    final IoOp op;
    final long first;
    final int blocks;
    final int bs;
    final int depth;
    final boolean hipri;
    final List<String> errors = new ArrayList<>();
    final ConcurrentLinkedQueue<Thread> callbackThreads = new ConcurrentLinkedQueue<>();
    volatile Thread vcpuThread;
    volatile int vcpuId = -1;
    volatile int commits;
    volatile int completed;
    volatile boolean finished;
    private final ArrayDeque<GuestBuffer> free = new ArrayDeque<>();
    private int next;

    BlockJob(IoOp op, long first, int blocks, int bs, int depth) {
        this(op, first, blocks, bs, depth, false);
    }

    /** With {@code hipri}, every I/O is a polled (high-priority) one. */
    BlockJob(IoOp op, long first, int blocks, int bs, int depth, boolean hipri) {
        this.hipri = hipri;
        this.op = op;
        this.first = first;
        this.blocks = blocks;
        this.bs = bs;
        this.depth = depth;
    }

    @Override
    public void start(Vcpu v) {
        vcpuThread = Thread.currentThread();
        vcpuId = v.id();
        v.allocateBuffers(depth, bs, free);
    }

    @Override
    public boolean step(Vcpu v) {
        boolean any = false;
        while (next < blocks && !free.isEmpty()) {
            GuestBuffer buf = free.poll();
            long block = first + next;
            if (op == IoOp.WRITE) {
                byte[] data = new byte[bs];
                PATTERN.fill(block, data, bs);
                buf.view().put(data);
            }
            v.submit(op, block * bs, bs, buf, hipri, (status, at) -> {
                callbackThreads.add(Thread.currentThread());
                if (status != VirtioBlk.S_OK) {
                    errors.add("block " + block + ": status " + status);
                } else if (op == IoOp.READ) {
                    byte[] got = new byte[bs];
                    ByteBuffer view = buf.view();
                    view.get(got);
                    if (!PATTERN.matches(block, got, bs, new byte[bs])) {
                        errors.add("block " + block + ": data mismatch");
                    }
                }
                completed++;
                free.add(buf);
            });
            next++;
            any = true;
        }
        if (any) {
            v.commit();
            commits++;
        }
        return next < blocks;
    }

    @Override
    public void finish(Vcpu v) {
        finished = true;
    }
}
