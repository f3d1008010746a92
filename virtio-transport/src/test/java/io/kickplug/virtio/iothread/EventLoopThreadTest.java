package io.kickplug.virtio.iothread;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.iothread.IoSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class EventLoopThreadTest {

    @Test
    void tasksRunInOrderOnTheLoopThread() throws Exception {
        try (EventLoopThread loop = new EventLoopThread("t")) {
            List<Integer> seen = new ArrayList<>();
            CountDownLatch done = new CountDownLatch(1);
            for (int i = 0; i < 100; i++) {
                int n = i;
                loop.execute(() -> {
                    assertTrue(loop.inLoop());
                    seen.add(n);
                });
            }
            loop.execute(done::countDown);
            assertTrue(done.await(10, TimeUnit.SECONDS));
            for (int i = 0; i < 100; i++) {
                assertEquals(i, seen.get(i));
            }
            assertFalse(loop.inLoop());
        }
    }

    /**
     * No signal is lost: producers publish a counter then signal; after they stop, the handler must
     * eventually have observed the final value (wait on that condition, bounded).
     */
    @Test
    void noLostWakeups() throws Exception {
        try (EventLoopThread loop = new EventLoopThread("t")) {
            AtomicLong published = new AtomicLong();
            AtomicLong observed = new AtomicLong();
            CountDownLatch reachedEnd = new CountDownLatch(1);
            int producers = 4;
            int perProducer = 20_000;
            long total = (long) producers * perProducer;
            IoSource src = loop.register("counter", () -> {
                long v = published.get();
                observed.set(v);
                if (v == total) {
                    reachedEnd.countDown();
                }
            });
            Thread[] ts = new Thread[producers];
            for (int p = 0; p < producers; p++) {
                ts[p] = new Thread(() -> {
                    for (int i = 0; i < perProducer; i++) {
                        published.incrementAndGet();
                        src.signal();
                    }
                });
                ts[p].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            assertTrue(reachedEnd.await(10, TimeUnit.SECONDS), "observed " + observed.get() + " of " + total);
        }
    }

    @Test
    void signalsCoalesceAndCancelledSourcesDoNotRun() throws Exception {
        try (EventLoopThread loop = new EventLoopThread("t")) {
            AtomicInteger runs = new AtomicInteger();
            CountDownLatch block = new CountDownLatch(1);
            CountDownLatch started = new CountDownLatch(1);
            loop.execute(() -> {
                started.countDown();
                try {
                    block.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(started.await(10, TimeUnit.SECONDS));
            CountDownLatch sRan = new CountDownLatch(1);
            IoSource s = loop.register("s", () -> {
                runs.incrementAndGet();
                sRan.countDown();
            });
            IoSource c = loop.register("c", runs::incrementAndGet);
            for (int i = 0; i < 10; i++) {
                s.signal();
            }
            c.signal();
            c.cancel();
            block.countDown();
            // The signals came during a task, so the sources run in the next iteration's source phase; a task
            // queued now may still run in this one's task phase (it drains the queue), so wait for s first.
            assertTrue(sRan.await(10, TimeUnit.SECONDS));
            CountDownLatch after = new CountDownLatch(1);
            loop.execute(after::countDown);
            assertTrue(after.await(10, TimeUnit.SECONDS));
            // The barrier task runs after that source phase: s ran once for ten signals, the cancelled c never.
            assertEquals(1, runs.get());
        }
    }

    @Test
    void failingHandlerDoesNotKillTheLoop() throws Exception {
        try (EventLoopThread loop = new EventLoopThread("t")) {
            loop.execute(() -> {
                throw new IllegalStateException("boom (expected by the test)");
            });
            CountDownLatch ok = new CountDownLatch(1);
            loop.execute(ok::countDown);
            assertTrue(ok.await(10, TimeUnit.SECONDS));
        }
    }

    /**
     * An end-of-iteration task scheduled by a source runs after that iteration's sources and tasks, in the
     * same iteration; one it schedules itself waits for the next iteration.
     */
    @Test
    void endOfIterationTasksRunAfterSourcesAndTasksOfTheirIteration() throws Exception {
        try (EventLoopThread loop = new EventLoopThread("t")) {
            List<String> seen = new ArrayList<>();
            long[] iteration = new long[3];
            CountDownLatch done = new CountDownLatch(1);
            IoSource second = loop.register("second", () -> seen.add("second source"));
            IoSource first = loop.register("first", () -> {
                seen.add("first source");
                iteration[0] = loop.iterations();
                loop.executeAtEndOfIteration(() -> {
                    seen.add("end");
                    iteration[1] = loop.iterations();
                    loop.executeAtEndOfIteration(() -> {
                        seen.add("end again");
                        iteration[2] = loop.iterations();
                        done.countDown();
                    });
                });
                loop.execute(() -> seen.add("task"));
                second.signal();
            });
            first.signal();
            assertTrue(done.await(10, TimeUnit.SECONDS));
            assertEquals(List.of("first source", "task", "end", "second source", "end again"), seen);
            assertEquals(iteration[0], iteration[1]);
            assertEquals(iteration[1] + 1, iteration[2]);
        }
    }

    @Test
    void endOfIterationTaskFromOutsideWakesTheLoop() throws Exception {
        try (EventLoopThread loop = new EventLoopThread("t")) {
            CountDownLatch ran = new CountDownLatch(1);
            loop.executeAtEndOfIteration(() -> {
                assertTrue(loop.inLoop());
                ran.countDown();
            });
            assertTrue(ran.await(10, TimeUnit.SECONDS));
        }
    }
}
