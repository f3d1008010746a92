package io.kickplug.blk.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendIo;
import io.kickplug.blk.testkit.RecordedIo;
import io.kickplug.virtio.testkit.Await;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** The batched hand-off of a blocking backend to worker threads. */
class WorkerPoolBackendTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** A one-shot operation that records its completion and the thread that completed it. */
    /** A submitted operation; its length is its buffers' at construction. */
    static final class Io extends RecordedIo {
        Io(Op op, long offset, ByteBuffer... buffers) {
            super(op, offset, buffers);
        }
    }

    @Test
    void submissionsWaitForUnplugThenEachCompletesOnceOnAWorker() throws Exception {
        MemoryBackend memory = new MemoryBackend(1 << 20, false);
        WorkerPoolBackend pool = new WorkerPoolBackend(memory, "t", 3);
        try {
            List<Io> ios = new ArrayList<>();
            for (int i = 0; i < 200; i++) { // more than the ring's first capacity: it grows
                ByteBuffer b = ByteBuffer.allocate(512);
                b.put(0, (byte) i);
                ios.add(new Io(BackendIo.Op.WRITE, i * 512L, b));
            }
            ios.forEach(pool::submit);
            assertEquals(0, pool.threads(), "nothing starts before the unplug");
            assertTrue(ios.stream().allMatch(io -> io.completions.get() == 0));
            pool.unplug();
            Await.await(() -> ios.stream().allMatch(io -> io.completions.get() == 1), TIMEOUT, "all complete");
            assertTrue(pool.threads() <= 3, "at most the configured workers: " + pool.threads());
            ConcurrentHashMap<String, Boolean> names = new ConcurrentHashMap<>();
            ios.forEach(io -> names.put(io.thread, true));
            assertTrue(names.keySet().stream().allMatch(n -> n.startsWith("kickplug-blk-t-worker")), names.toString());
            ios.forEach(io -> assertNull(io.error));
            for (int i = 0; i < 200; i++) {
                ByteBuffer b = ByteBuffer.allocate(512);
                memory.read(i * 512L, new ByteBuffer[] {b});
                assertEquals((byte) i, b.get(0));
            }
            // Parked workers are woken again for the next batch.
            Io read = new Io(BackendIo.Op.READ, 512, ByteBuffer.allocate(512));
            pool.submit(read);
            pool.unplug();
            Await.await(() -> read.completions.get() == 1, TIMEOUT, "second batch");
            assertEquals(1, read.buffers()[0].get(0));
        } finally {
            pool.close();
        }
    }

    @Test
    void aFailingCallCompletesWithItsErrorAndAClosedPoolRefuses() throws Exception {
        WorkerPoolBackend pool = new WorkerPoolBackend(new MemoryBackend(4096, false), "t", 1);
        Io beyond = new Io(BackendIo.Op.WRITE, 4096, ByteBuffer.allocate(512));
        pool.submit(beyond);
        pool.unplug();
        Await.await(() -> beyond.completions.get() == 1, TIMEOUT, "completion");
        assertNotNull(beyond.error, "a write past the end fails");
        pool.close();
        Io late = new Io(BackendIo.Op.FLUSH, 0);
        pool.submit(late);
        assertEquals(1, late.completions.get());
        assertNotNull(late.error);
    }

    /**
     * Submits {@code io}, which must not complete before the unplug ({@code why} says why), then unplugs and waits
     * until a worker has completed it ({@code what} names it in a timeout's message).
     */
    private static void handedOff(WorkerPoolBackend pool, Io io, String why, String what) {
        pool.submit(io);
        assertEquals(0, io.completions.get(), why);
        pool.unplug();
        Await.await(() -> io.completions.get() == 1, TIMEOUT, what);
    }

    /** A clock the test moves by hand; the backend reads it around each inline operation. */
    static final class ManualClock implements java.util.function.LongSupplier {
        long now = 1_000_000_000L;
        long stepPerRead;

        @Override
        public long getAsLong() {
            long t = now;
            now += stepPerRead;
            return t;
        }
    }

    @Test
    void aFastPageCacheReadOnAnIdlePoolRunsInlineOnTheSubmittingThread() throws Exception {
        MemoryBackend memory = new MemoryBackend(1 << 20, false);
        ByteBuffer data = ByteBuffer.allocate(4096);
        data.put(0, (byte) 7);
        memory.write(8192, new ByteBuffer[] {data});
        ManualClock clock = new ManualClock();
        WorkerPoolBackend pool = new WorkerPoolBackend(memory, "t", 2, true, clock);
        try {
            Io read = new Io(BackendIo.Op.READ, 8192, ByteBuffer.allocate(4096));
            pool.submit(read);
            assertEquals(1, read.completions.get(), "completed inside submit, before any unplug");
            assertEquals(Thread.currentThread().getName(), read.thread);
            assertEquals(7, read.buffers()[0].get(0));
            assertEquals(0, pool.threads(), "no worker started");
            assertEquals(1, pool.inlineRuns());
            Io second = new Io(BackendIo.Op.READ, 8192, ByteBuffer.allocate(4096));
            handedOff(pool, second, "the rest of the batch waits for the unplug and a worker", "handed-off read");
            assertTrue(second.thread.startsWith("kickplug-blk-t-worker"), second.thread);
            Await.await(() -> {
                Io write = new Io(BackendIo.Op.WRITE, 0, ByteBuffer.allocate(4096));
                pool.submit(write); // the next batch: inline once the worker has parked
                pool.unplug();
                return write.completions.get() == 1 && write.thread.equals(Thread.currentThread().getName());
            }, TIMEOUT, "a small write without FUA runs inline too");
        } finally {
            pool.close();
        }
    }

    @Test
    void flushesFuaLargeOperationsAndAPoolWithoutTheOptionGoToTheWorkers() throws Exception {
        MemoryBackend memory = new MemoryBackend(1 << 20, false);
        WorkerPoolBackend pool = new WorkerPoolBackend(memory, "t", 1, true, new ManualClock());
        WorkerPoolBackend plain = new WorkerPoolBackend(memory, "p", 1);
        try {
            RecordedIo fuaWrite = new RecordedIo(BackendIo.Op.WRITE, 0, 4096,
                    new ByteBuffer[] {ByteBuffer.allocate(4096)}, true, false);
            List<RecordedIo> handedOff = List.of(new Io(BackendIo.Op.FLUSH, 0), fuaWrite,
                    new Io(BackendIo.Op.READ, 0, ByteBuffer.allocate((int) WorkerPoolBackend.INLINE_MAX_BYTES + 512)));
            for (RecordedIo io : handedOff) {
                pool.submit(io);
                assertEquals(0, io.completions.get(), io.op() + " waits for the unplug");
            }
            pool.unplug();
            Await.await(() -> handedOff.stream().allMatch(io -> io.completions.get() == 1), TIMEOUT, "hand-offs");
            handedOff.forEach(io -> assertTrue(io.thread.startsWith("kickplug-blk-t-worker"), io.thread));
            assertEquals(0, pool.inlineRuns());
            handedOff(plain, new Io(BackendIo.Op.READ, 0, ByteBuffer.allocate(4096)),
                    "without inlineWhenFast every operation is handed off", "plain pool");
        } finally {
            pool.close();
            plain.close();
        }
    }

    @Test
    void aBusyPoolTakesTheNextOperationInsteadOfRunningItInline() throws Exception {
        MemoryBackend memory = new MemoryBackend(1 << 20, false);
        WorkerPoolBackend pool = new WorkerPoolBackend(memory, "t", 1, true, new ManualClock());
        try {
            Io flush = new Io(BackendIo.Op.FLUSH, 0);
            pool.submit(flush); // queued: the pool is no longer idle
            Io read = new Io(BackendIo.Op.READ, 0, ByteBuffer.allocate(4096));
            pool.submit(read);
            assertEquals(0, read.completions.get(), "queued behind the flush, not run inline");
            pool.unplug();
            Await.await(() -> read.completions.get() == 1 && flush.completions.get() == 1, TIMEOUT, "both");
            assertTrue(read.thread.startsWith("kickplug-blk-t-worker"), read.thread);
        } finally {
            pool.close();
        }
    }

    @Test
    void aSlowInlineOperationClosesTheInlinePathForThePause() throws Exception {
        MemoryBackend memory = new MemoryBackend(1 << 20, false);
        ManualClock clock = new ManualClock();
        WorkerPoolBackend pool = new WorkerPoolBackend(memory, "t", 1, true, clock);
        try {
            clock.stepPerRead = WorkerPoolBackend.INLINE_SLOW_NS + 1; // the next inline read looks slow
            Io slow = new Io(BackendIo.Op.READ, 0, ByteBuffer.allocate(4096));
            pool.submit(slow);
            assertEquals(1, slow.completions.get(), "the first one ran inline (and was timed slow)");
            pool.unplug(); // a new batch
            clock.stepPerRead = 0;
            handedOff(pool, new Io(BackendIo.Op.READ, 0, ByteBuffer.allocate(4096)), "closed: handed off",
                    "handed-off read");
            Await.await(() -> pool.threads() == 1, TIMEOUT, "worker started");
            clock.now += WorkerPoolBackend.INLINE_PAUSE_NS; // the pause is over
            Await.await(() -> {
                Io probe = new Io(BackendIo.Op.READ, 0, ByteBuffer.allocate(4096));
                pool.submit(probe); // inline again once the worker has parked (the pool is idle)
                if (probe.completions.get() == 0) {
                    pool.unplug();
                    return false;
                }
                return true;
            }, TIMEOUT, "inline again after the pause");
            assertEquals(2, pool.inlineRuns());
        } finally {
            pool.close();
        }
    }
}
