package io.kickplug.guest.engine;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.api.iothread.PollHandler;
import io.kickplug.api.poll.PollWindow;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * ioeventfd off in real threads: the I/O threads of {@code delegate}, except that a queue notify made by a vCPU
 * of a real-time machine during its exit ({@link #inExit()}) runs the queue's handler to its end before the
 * vCPU resumes: the vCPU waits, inside its exit, while the device pops and submits what is available. The handler
 * runs on the queue's I/O thread (which alone touches the device's queue state), not on the vCPU's thread; the
 * vCPU is held for exactly that long. In virtual time {@link VirtualIoThread} runs it on the vCPU itself.
 */
public final class SynchronousNotify implements IoThreadFactory {

    /** Set by a real-time vCPU around its notify write (the exit). */
    private static final ThreadLocal<Boolean> IN_EXIT = new ThreadLocal<>();
    /** Longest wait of an exit for its handler (a stuck device fails the exit rather than the vCPU forever). */
    static final long MAX_EXIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final IoThreadFactory delegate;

    public SynchronousNotify(IoThreadFactory delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    static void exit(boolean in) {
        if (in) {
            IN_EXIT.set(Boolean.TRUE);
        } else {
            IN_EXIT.remove();
        }
    }

    static boolean inExit() {
        return IN_EXIT.get() != null;
    }

    @Override
    public IoThread start(String name) {
        IoThread t = delegate.start(name);
        return new ForwardingIoThread(t) {
            @Override
            public IoSource register(String sourceName, Runnable handler) {
                IoSource real = t.register(sourceName, handler);
                return new IoSource() {
                    @Override
                    public void signal() {
                        if (!inExit() || t.inLoop()) {
                            real.signal();
                            return;
                        }
                        CountDownLatch ran = new CountDownLatch(1);
                        try {
                            t.execute(() -> {
                                try {
                                    handler.run();
                                } finally {
                                    ran.countDown();
                                }
                            });
                        } catch (RejectedExecutionException stopped) {
                            return; // a stopped loop: as a signal to it would be
                        }
                        try {
                            if (!ran.await(MAX_EXIT_NANOS, TimeUnit.NANOSECONDS)) {
                                real.signal(); // the handler is late: leave it to the loop, end the exit
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }

                    @Override
                    public void cancel() {
                        real.cancel();
                    }

                    @Override
                    public void setPoll(PollHandler poll, PollWindow window) {
                        real.setPoll(poll, window);
                    }
                };
            }

            @Override
            public void executeAtEndOfIteration(Runnable task) {
                t.executeAtEndOfIteration(task);
            }
        };
    }
}
