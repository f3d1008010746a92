package io.kickplug.batching;

import io.kickplug.virtio.testkit.InlineIoThread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.virtio.iothread.EventLoopThread;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** bh: decisions happen at the end of the loop iteration, at most one per queue per iteration. */
class BottomHalfNotifierTest {

    private final BottomHalfNotifier bh = new BottomHalfNotifier();

    @Test
    void batchesOfOneIterationGetOneDecisionAtItsEnd() {
        InlineIoThread loop = InlineIoThread.manual();
        FakeQueue q = new FakeQueue(0, loop);
        for (int i = 0; i < 5; i++) {
            q.batch(bh, 3);
        }
        assertEquals(0, q.decisions.size());
        assertEquals(1, loop.scheduled());
        loop.endIteration();
        assertEquals(List.of(1L), q.decisions);
        assertEquals(List.of(15), q.covered);
        q.batch(bh, 2);
        loop.endIteration();
        assertEquals(List.of(1L, 2L), q.decisions);
    }

    @Test
    void detachDecidesNowAndTheScheduledBottomHalfDoesNothing() {
        InlineIoThread loop = InlineIoThread.manual();
        FakeQueue q = new FakeQueue(0, loop);
        q.batch(bh, 4);
        bh.detach(q);
        assertEquals(List.of(4), q.covered);
        loop.endIteration();
        assertEquals(1, q.decisions.size());
    }

    /**
     * On a real event loop: a handler runs batches on two queues, several per iteration and re-signals itself;
     * every queue gets at most one decision per iteration and every used buffer is covered.
     */
    @Test
    void atMostOneDecisionPerQueuePerLoopIteration() throws Exception {
        try (EventLoopThread loop = new EventLoopThread("bh-test")) {
            FakeQueue a = new FakeQueue(0, loop);
            FakeQueue b = new FakeQueue(1, loop);
            AtomicInteger runs = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(1);
            IoSource[] source = new IoSource[1];
            source[0] = loop.register("batches", () -> {
                int run = runs.incrementAndGet();
                for (int i = 0; i < 1 + run % 4; i++) {
                    a.batch(bh, 1 + i);
                    if (run % 3 != 0) {
                        b.batch(bh, 2);
                    }
                }
                if (run < 200) {
                    source[0].signal();
                } else {
                    loop.executeAtEndOfIteration(() -> loop.executeAtEndOfIteration(done::countDown));
                }
            });
            source[0].signal();
            assertTrue(done.await(10, TimeUnit.SECONDS));
            CountDownLatch read = new CountDownLatch(1);
            loop.execute(read::countDown);
            assertTrue(read.await(10, TimeUnit.SECONDS));
            for (FakeQueue q : List.of(a, b)) {
                Set<Long> iterations = new HashSet<>(q.decisions);
                assertEquals(iterations.size(), q.decisions.size(), "queue " + q.index() + " decided twice in an "
                        + "iteration: " + q.decisions);
                assertEquals(q.pushed, q.covered.stream().mapToInt(Integer::intValue).sum(),
                        "used buffers left without a decision on queue " + q.index());
                assertEquals(0, q.pendingUsed());
            }
            assertEquals(200, a.decisions.size());
        }
    }
}
