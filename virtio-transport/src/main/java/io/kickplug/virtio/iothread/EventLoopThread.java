package io.kickplug.virtio.iothread;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * An I/O thread: runs signalled sources, then queued tasks, then end-of-iteration tasks, then parks until
 * the next signal (QEMU's IOThread with its AioContext, reduced to what the devices need).
 *
 * <p>Wake-up protocol: a signaller enqueues, then reads {@code sleeping}; the loop sets {@code sleeping},
 * then re-checks both queues before parking. Both sides use volatile accesses (sequentially consistent),
 * so at least one of them sees the other's write and no signal is lost.
 */
public final class EventLoopThread implements IoThread {
    private static final Logger LOG = Logger.getLogger(EventLoopThread.class.getName());
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final String name;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Source> ready = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Runnable> endOfIteration = new ConcurrentLinkedQueue<>();
    private volatile boolean running = true;
    private volatile boolean sleeping;
    private volatile long iterations;

    private final class Source implements IoSource {
        final String sourceName;
        final Runnable handler;
        final AtomicBoolean pending = new AtomicBoolean();
        volatile boolean cancelled;

        Source(String sourceName, Runnable handler) {
            this.sourceName = sourceName;
            this.handler = handler;
        }

        @Override
        public void signal() {
            if (!cancelled && pending.compareAndSet(false, true)) {
                ready.add(this);
                wake();
            }
        }

        @Override
        public void cancel() {
            cancelled = true;
        }
    }

    public EventLoopThread(String name) {
        this.name = name;
        this.thread = new Thread(this::loop, name);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public IoSource register(String sourceName, Runnable handler) {
        return new Source(sourceName, handler);
    }

    @Override
    public void execute(Runnable task) {
        if (!running) {
            throw new IllegalStateException("I/O thread " + name + " is stopped");
        }
        tasks.add(task);
        wake();
    }

    @Override
    public void executeAtEndOfIteration(Runnable task) {
        if (!running) {
            throw new IllegalStateException("I/O thread " + name + " is stopped");
        }
        endOfIteration.add(task);
        wake();
    }

    private void wake() {
        if (sleeping) {
            LockSupport.unpark(thread);
        }
    }

    @Override
    public boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    @Override
    public long iterations() {
        return iterations;
    }

    @Override
    public long cpuTimeNanos() {
        try {
            return THREADS.isThreadCpuTimeSupported() ? THREADS.getThreadCpuTime(thread.getId()) : -1;
        } catch (UnsupportedOperationException e) {
            return -1;
        }
    }

    private void loop() {
        while (running) {
            iterations++;
            boolean worked = false;
            // Run the sources signalled so far; a source signalled while it runs is queued again and runs
            // in the next iteration.
            for (int n = ready.size(); n > 0; n--) {
                Source s = ready.poll();
                if (s == null) {
                    break;
                }
                s.pending.set(false);
                if (!s.cancelled) {
                    run(s.handler, s.sourceName);
                }
                worked = true;
            }
            Runnable t;
            while ((t = tasks.poll()) != null) {
                run(t, "task");
                worked = true;
            }
            // End-of-iteration tasks queued so far; one queued while they run waits for the next iteration.
            for (int n = endOfIteration.size(); n > 0 && (t = endOfIteration.poll()) != null; n--) {
                run(t, "end-of-iteration task");
                worked = true;
            }
            if (!worked) {
                sleeping = true;
                if (ready.isEmpty() && tasks.isEmpty() && endOfIteration.isEmpty() && running) {
                    LockSupport.park(this);
                }
                sleeping = false;
            }
        }
        // Drain tasks submitted before close so nobody waits for them forever.
        Runnable t;
        while ((t = tasks.poll()) != null || (t = endOfIteration.poll()) != null) {
            run(t, "task");
        }
    }

    private void run(Runnable r, String what) {
        try {
            r.run();
        } catch (Throwable e) {
            // Nothing escapes the loop: a failing handler is a device bug; log it and keep serving.
            LOG.log(Level.SEVERE, "I/O thread " + name + ": " + what + " failed", e);
        }
    }

    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
        if (Thread.currentThread() != thread) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "EventLoopThread(" + name + ")";
    }
}
