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
}
