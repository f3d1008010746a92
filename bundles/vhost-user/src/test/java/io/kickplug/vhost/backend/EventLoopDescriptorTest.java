package io.kickplug.vhost.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.virtio.iothread.EventLoopThread;
import io.kickplug.virtio.testkit.Await;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.newsclub.net.unix.AFPipe;

/**
 * The I/O thread waits on kick descriptors itself (issue 12): {@link EventLoopThread#registerDescriptor} with
 * {@link JunixDescriptorPoller}, as a vhost-user session uses them. A pipe plays the kick eventfd (Java cannot
 * create eventfds).
 */
class EventLoopDescriptorTest {

    private static void kick(AFPipe pipe) throws Exception {
        pipe.sink().write(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(1).flip());
    }

    /** Has {@code loop} watch the pipe's read end as queue "q0", counting the handler's runs in {@code handled}. */
    private static IoSource watch(EventLoopThread loop, AFPipe kick, AtomicInteger handled) throws Exception {
        return loop.registerDescriptor("q0", kick.source().getFileDescriptor(), JunixDescriptorPoller.INSTANCE, null,
                handled::incrementAndGet);
    }

    @Test
    void aKickRunsTheHandlerOnTheLoopThreadWhichReadTheDescriptor() throws Exception {
        try (EventLoopThread loop = new EventLoopThread("test-desc-loop"); AFPipe kick = AFPipe.open()) {
            LinkedBlockingQueue<Thread> ran = new LinkedBlockingQueue<>();
            AtomicInteger reads = new AtomicInteger();
            IoSource source = loop.registerDescriptor("q0", kick.source().getFileDescriptor(),
                    JunixDescriptorPoller.INSTANCE, reads::incrementAndGet, () -> ran.add(Thread.currentThread()));
            for (int i = 1; i <= 3; i++) {
                kick(kick);
                Thread t = ran.poll(10, TimeUnit.SECONDS);
                assertTrue(t != null, "kick " + i + " ran the handler");
                assertEquals("test-desc-loop", t.getName(), "on the loop thread");
                assertEquals(i, reads.get(), "one read per kick");
            }
            source.cancel();
        }
    }

    @Test
    void tasksAndSignalsWakeALoopThatSleepsInPoll() throws Exception {
        try (EventLoopThread loop = new EventLoopThread("test-desc-wake"); AFPipe kick = AFPipe.open()) {
            AtomicInteger handled = new AtomicInteger();
            IoSource source = watch(loop, kick, handled);
            for (int i = 0; i < 200; i++) {
                CountDownLatch done = new CountDownLatch(1);
                loop.execute(done::countDown); // the loop sleeps in poll(2) between these: a wake-up write each
                assertTrue(done.await(10, TimeUnit.SECONDS), "task " + i + " ran");
            }
            int before = handled.get();
            source.signal();
            Await.await(() -> handled.get() > before, "a signal (an in-process notification) ran the handler");
            source.cancel();
        }
    }

    @Test
    void afterCancelTheLoopNoLongerReadsTheDescriptor() throws Exception {
        try (EventLoopThread loop = new EventLoopThread("test-desc-cancel"); AFPipe kick = AFPipe.open()) {
            AtomicInteger handled = new AtomicInteger();
            IoSource source = watch(loop, kick, handled);
            kick(kick);
            Await.await(() -> handled.get() > 0, "the kick ran the handler");
            assertEquals(1, handled.get());
            source.cancel(); // returns once the loop stopped watching: the caller may close the descriptor
            kick(kick);
            CountDownLatch barrier = new CountDownLatch(1);
            loop.execute(barrier::countDown);
            assertTrue(barrier.await(10, TimeUnit.SECONDS));
            kick.source().configureBlocking(false);
            ByteBuffer left = ByteBuffer.allocate(16);
            assertEquals(8, kick.source().read(left), "the kick after cancel() is still in the descriptor");
            assertEquals(1, handled.get());
        }
    }

    @Test
    void oneLoopWaitsWithOnePoller() throws Exception {
        try (EventLoopThread loop = new EventLoopThread("test-desc-one"); AFPipe a = AFPipe.open()) {
            IoSource s = loop.registerDescriptor("a", a.source().getFileDescriptor(), JunixDescriptorPoller.INSTANCE,
                    null, () -> { });
            assertTrue(loop.waitsOnDescriptors());
            assertThrows(IllegalStateException.class, () -> loop.registerDescriptor("b", a.source().getFileDescriptor(),
                            new io.kickplug.api.iothread.DescriptorPoller() {
                                @Override
                                public PollSet pollSet(java.io.FileDescriptor[] fds) {
                                    throw new UnsupportedOperationException();
                                }

                                @Override
                                public Wakeup openWakeup() {
                                    throw new UnsupportedOperationException();
                                }
                            }, null, () -> { }));
            s.cancel();
        }
    }
}
