package io.kickplug.virtio.iothread;

import static io.kickplug.virtio.testkit.Await.await;
import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.PollHandler;
import io.kickplug.api.poll.PollWindow;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The poll phase of {@link EventLoopThread}: a producer that notifies only while notifications are on (the
 * way a virtio driver honours NO_NOTIFY / avail_event, VIRTIO 1.2 section 2.7.10) must never be left
 * waiting, whatever the timing of its adds against the loop's switches between polling and blocking.
 */
class EventLoopPollTest {


    /** A queue model: a counter of produced items, consumed by the handler, with a notification switch. */
    static final class ModelQueue implements PollHandler, Runnable {
        final AtomicLong produced = new AtomicLong();
        volatile long consumed;
        volatile boolean notify = true;
        volatile Thread loopThread;
        final AtomicLong begins = new AtomicLong();
        final AtomicLong ends = new AtomicLong();
        volatile long hits;
        volatile long misses;
        volatile long pollNanos;
        final List<Thread> wrongThreads = new CopyOnWriteArrayList<>();
        IoSource source;

        /** The driver side: publish, full fence, then notify only when asked to (kick_prepare). */
        void add() {
            produced.incrementAndGet();
            VarHandle.fullFence();
            if (notify) {
                source.signal();
            }
        }

        /** The handler: consume everything published. */
        @Override
        public void run() {
            check();
            consumed = produced.get();
        }

        @Override
        public boolean poll() {
            check();
            return produced.get() != consumed;
        }

        @Override
        public void pollBegin() {
            check();
            begins.incrementAndGet();
            notify = false;
        }

        @Override
        public void pollEnd() {
            check();
            ends.incrementAndGet();
            notify = true;
            VarHandle.fullFence(); // the re-enable is visible before the loop's last poll reads the counter
        }

        @Override
        public void polled(int h, int m, long nanos) {
            check();
            hits += h;
            misses += m;
            pollNanos += nanos;
        }

        String counters() {
            return "hits " + hits + ", misses " + misses + ", poll ns " + pollNanos;
        }

        private void check() {
            if (loopThread != null && Thread.currentThread() != loopThread) {
                wrongThreads.add(Thread.currentThread());
            }
        }
    }

    /** A window of a fixed or random length that records its updates. */
    static final class TestWindow implements PollWindow {
        final long maxNs;
        final boolean random;
        final AtomicLong updates = new AtomicLong();

        TestWindow(long maxNs, boolean random) {
            this.maxNs = maxNs;
            this.random = random;
        }

        @Override
        public long pollNs() {
            return random ? ThreadLocalRandom.current().nextLong(maxNs + 1) : maxNs;
        }

        @Override
        public void update(long blockNs) {
            updates.incrementAndGet();
        }
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    private static ModelQueue register(EventLoopThread loop) throws Exception {
        ModelQueue q = new ModelQueue();
        q.source = loop.register("model", q);
        java.util.concurrent.CompletableFuture<Thread> t = new java.util.concurrent.CompletableFuture<>();
        loop.execute(() -> t.complete(Thread.currentThread()));
        q.loopThread = t.get(10, TimeUnit.SECONDS);
        return q;
    }

    /** Each test's loop, with one model queue registered on it. */
    private EventLoopThread loop;
    private ModelQueue q;

    @BeforeEach
    void startLoop(TestInfo test) throws Exception {
        loop = new EventLoopThread("poll-" + test.getTestMethod().orElseThrow().getName());
        q = register(loop);
    }

    /** Whatever a test did, the queue's handler was called on the loop thread only. */
    @AfterEach
    void stopLoop() {
        try {
            assertEquals(List.of(), q.wrongThreads);
        } finally {
            loop.close();
        }
    }

    @Test
    void addsRacingThePollToNotifySwitchAreNeverLost() throws Exception {
        // Windows of 0..3 us and producer gaps of 0..6 us: adds land before, inside and after the poll
        // window, and right on its end, where notifications are being switched back on.
        q.source.setPoll(q, new TestWindow(3_000, true));
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 1; i <= 50_000; i++) {
            spin(random.nextLong(6_000));
            q.add();
            long n = i;
            await(() -> q.consumed == n, "add " + i + " (" + q.counters() + ")");
        }
        assertTrue(q.begins.get() > 0 && q.ends.get() > 0, "the loop switched between polling and blocking");
        // Then adds right after each completion into 50 ms windows: found by polling, no notification.
        long hitsBefore = q.hits;
        q.source.setPoll(q, new TestWindow(50_000_000, false));
        for (int i = 50_001; i <= 50_100; i++) {
            q.add();
            long n = i;
            await(() -> q.consumed == n, "add " + i);
        }
        assertTrue(q.hits > hitsBefore, "adds were found by polling: " + q.counters());
        // Idle: the loop leaves poll mode before it blocks, so notifications end up on.
        await(() -> q.notify && q.begins.get() == q.ends.get(), "notifications back on when idle");
    }

    @Test
    void turningPollingOnAndOffWhileAddsRunLosesNothing() throws Exception {
        TestWindow window = new TestWindow(20_000, false);
        int rounds = 20_000;
        Thread toggler = new Thread(() -> {
            for (int i = 0; i < rounds && !Thread.currentThread().isInterrupted(); i++) {
                if (i % 2 == 0) {
                    q.source.setPoll(q, window);
                } else {
                    q.source.setPoll(null, null);
                }
                spin(ThreadLocalRandom.current().nextLong(10_000));
            }
            q.source.setPoll(null, null);
        });
        toggler.start();
        long i = 0;
        while (toggler.isAlive()) {
            spin(ThreadLocalRandom.current().nextLong(5_000));
            q.add();
            long n = ++i;
            await(() -> q.consumed == n, "add " + n);
        }
        toggler.join();
        await(() -> q.notify && q.begins.get() == q.ends.get(), "polling off leaves notifications on");
        long endsBefore = q.ends.get();
        q.add();
        long n = i + 1;
        await(() -> q.consumed == n, "an add after polling was turned off");
        assertEquals(endsBefore, q.ends.get(), "no polling after setPoll(null, null)");
    }

    @Test
    void anExpiredWindowCountsAMissAndPollTime() throws Exception {
        TestWindow window = new TestWindow(200_000, false);
        q.source.setPoll(q, window);
        q.add();
        await(() -> q.consumed == 1, "first add");
        await(() -> q.misses >= 1, "a miss after a 200 us window without work");
        assertTrue(q.pollNanos >= 200_000, "the window was polled to its end: " + q.counters());
        await(() -> q.notify, "notifications on after the miss");
    }

    @Test
    void aWindowIsUpdatedWhenItsSourceBecomesReady() throws Exception {
        TestWindow window = new TestWindow(0, false); // never polls, but still learns from each wait
        q.source.setPoll(q, window);
        q.add(); // the loop has taken the poll settings once this is consumed
        await(() -> q.consumed == 1, "first add");
        for (int i = 2; i <= 11; i++) {
            // Add only once the loop blocks, so that each add ends a wait.
            await(() -> q.loopThread.getState() == Thread.State.WAITING, "the loop blocks");
            q.add();
            long n = i;
            await(() -> q.consumed == n, "add " + i);
        }
        await(() -> window.updates.get() >= 10, "an update after each wait that ended with the source ready");
        assertEquals(0, q.begins.get(), "a 0 ns window never enters poll mode");
    }

    @Test
    void cancellingAPolledSourceEndsPollingOnTheLoopThread() throws Exception {
        q.source.setPoll(q, new TestWindow(1_000_000_000L, false)); // polls for up to 1 s
        q.add();
        await(() -> q.consumed == 1, "first add");
        await(() -> q.begins.get() == 1, "poll mode");
        q.source.cancel();
        await(() -> q.ends.get() == 1 && q.notify, "pollEnd after cancel");
    }

    @Test
    void aSourceNeedsBothHandlerAndWindow() {
        IoSource s = loop.register("s", () -> { });
        assertThrows(IllegalArgumentException.class, () -> s.setPoll(new ModelQueue(), null));
    }
}
