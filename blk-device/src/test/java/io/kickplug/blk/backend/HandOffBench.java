package io.kickplug.blk.backend;

import io.kickplug.api.blk.BackendIo;
import io.kickplug.blk.testkit.RecordedIo;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The cost of handing a blocking backend's operations to worker threads and back (issue 12 item 5), without the
 * rest of the device: one "I/O thread" submits batches of {@code depth} 4 KiB reads of a memory backend (a
 * page-cache hit's stand-in) and waits for their completions, which come back through a concurrent queue and an
 * unpark, as IoContext.post does. Before: one ThreadPoolExecutor.execute per request (the device's pool until
 * now); after: {@link WorkerPoolBackend} (submit per request, one unplug per batch). Prints requests per second and
 * process CPU per request (all threads). Not a test: run it by hand,
 * {@code java -cp ... io.kickplug.blk.backend.HandOffBench [seconds] [depth] [workers]}.
 */
public final class HandOffBench {

    private HandOffBench() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int depth = args.length > 1 ? Integer.parseInt(args[1]) : 32;
        int workers = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        for (int round = 0; round < 2; round++) {
            run("before: ThreadPoolExecutor per request", seconds, depth, workers, false);
            run("after:  WorkerPoolBackend, batched", seconds, depth, workers, true);
        }
    }

    private static void run(String label, int seconds, int depth, int workers, boolean batched) throws Exception {
        MemoryBackend memory = new MemoryBackend(64 << 20, false);
        ConcurrentLinkedQueue<Req> done = new ConcurrentLinkedQueue<>();
        Thread io = Thread.currentThread();
        Req[] ops = new Req[depth];
        for (int i = 0; i < depth; i++) {
            ops[i] = new Req(i * 4096L, done, io);
        }
        WorkerPoolBackend pool = new WorkerPoolBackend(memory, "bench", workers);
        ThreadPoolExecutor tpe = new ThreadPoolExecutor(workers, workers, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>());
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long warmEnd = System.nanoTime() + 2_000_000_000L;
        long cpu0 = 0;
        long t0 = 0;
        long requests = 0;
        boolean measuring = false;
        long end = warmEnd + seconds * 1_000_000_000L;
        while (true) {
            long now = System.nanoTime();
            if (!measuring && now >= warmEnd) {
                measuring = true;
                cpu0 = os.getProcessCpuTime();
                t0 = now;
                requests = 0;
            }
            if (now >= end) {
                break;
            }
            for (Req op : ops) {
                op.finished = false;
                if (batched) {
                    pool.submit(op);
                } else {
                    tpe.execute(() -> op.complete(SyncBackends.perform(memory, op)));
                }
            }
            if (batched) {
                pool.unplug();
            }
            int left = depth;
            while (left > 0) {
                Req d;
                while ((d = done.poll()) != null) {
                    left--;
                }
                if (left > 0) {
                    LockSupport.park();
                }
            }
            requests += depth;
        }
        long cpu = os.getProcessCpuTime() - cpu0;
        double elapsed = (System.nanoTime() - t0) / 1e9;
        System.out.printf("%-40s depth %d: %,.0f requests/s, %.2f us CPU per request (all threads)%n", label, depth,
                requests / elapsed, cpu / 1e3 / requests);
        pool.close();
        tpe.shutdown();
    }

    private static final class Req extends RecordedIo {
        final ConcurrentLinkedQueue<Req> finishedQueue;
        final Thread io;
        volatile boolean finished;

        Req(long offset, ConcurrentLinkedQueue<Req> done, Thread io) {
            super(BackendIo.Op.READ, offset, 4096, new ByteBuffer[] {ByteBuffer.allocateDirect(4096)}, false, false);
            this.finishedQueue = done;
            this.io = io;
        }

        @Override
        public ByteBuffer[] buffers() {
            ByteBuffer[] buffers = super.buffers();
            buffers[0].clear();
            return buffers;
        }

        @Override
        public void complete(IOException error) {
            finishedQueue.add(this);
            LockSupport.unpark(io);
        }
    }
}
