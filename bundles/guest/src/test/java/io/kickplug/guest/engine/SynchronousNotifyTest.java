package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** ioeventfd off in real threads: a notify made inside an exit returns only after the queue's handler ran. */
class SynchronousNotifyTest {

    private final ExecutorService loop = Executors.newSingleThreadExecutor();
    private final AtomicReference<Thread> loopThread = new AtomicReference<>();

    @AfterEach
    void tearDown() {
        loop.shutdownNow();
    }

    /** A minimal loop: a signal runs the handler on the loop's thread, later. */
    private IoThread loop() {
        return new IoThread() {
            @Override
            public String name() {
                return "loop";
            }

            @Override
            public IoSource register(String name, Runnable handler) {
                return new IoSource() {
                    @Override
                    public void signal() {
                        loop.execute(handler);
                    }

                    @Override
                    public void cancel() {
                    }
                };
            }

            @Override
            public void execute(Runnable task) {
                loop.execute(() -> {
                    loopThread.set(Thread.currentThread());
                    task.run();
                });
            }

            @Override
            public boolean inLoop() {
                return Thread.currentThread() == loopThread.get();
            }

            @Override
            public long iterations() {
                return 0;
            }

            @Override
            public long cpuTimeNanos() {
                return -1;
            }

            @Override
            public void close() {
            }
        };
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aNotifyInsideTheExitWaitsForTheHandlerAndOneOutsideDoesNot() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        IoThread t = new SynchronousNotify(name -> loop()).start("io0");
        IoSource q = t.register("q0", () -> {
            ranOn.set(Thread.currentThread());
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ran.incrementAndGet();
        });
        // Outside an exit (ioeventfd on, or not a vCPU): the signal returns at once, the handler runs later.
        release.countDown();
        q.signal();
        // Inside an exit: the signal returns after the handler ran (on the loop's thread, not here).
        CountDownLatch second = new CountDownLatch(1);
        IoSource q1 = t.register("q1", () -> {
            ranOn.set(Thread.currentThread());
            ran.incrementAndGet();
            second.countDown();
        });
        SynchronousNotify.exit(true);
        try {
            q1.signal();
            assertEquals(0, second.getCount(), "the handler ran before the exit ended");
            assertNotSame(Thread.currentThread(), ranOn.get(), "on the I/O thread, which owns the queue");
        } finally {
            SynchronousNotify.exit(false);
        }
        assertFalse(SynchronousNotify.inExit());
    }
}
