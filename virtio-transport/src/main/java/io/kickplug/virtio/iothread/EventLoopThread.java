package io.kickplug.virtio.iothread;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.iothread.PollHandler;
import io.kickplug.api.poll.PollWindow;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
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
 *
 * <p>Polling (QEMU's aio_poll with adaptive polling): when an iteration found no work, the loop first polls
 * the sources that have a {@link PollHandler} for up to the longest of their windows, with every handler's
 * {@link PollHandler#pollBegin()} called (notifications off); a poll that finds work queues that source as a
 * signal would, and the loop stays in poll mode. Before it blocks, it calls every {@link PollHandler#pollEnd()}
 * and polls each source once more: work that arrived while notifications were off and its producer did not
 * notify is found there. After the wait each polled source that became ready updates its window with the
 * time the wait took. Poll settings change only at the start of an iteration, on this thread.
 */
public final class EventLoopThread implements IoThread {
    private static final Logger LOG = Logger.getLogger(EventLoopThread.class.getName());
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final String name;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Source> ready = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Runnable> endOfIteration = new ConcurrentLinkedQueue<>();
    /** Sources whose poll settings changed or that were cancelled; reconciled by the loop. */
    private final ConcurrentLinkedQueue<Source> pollChanges = new ConcurrentLinkedQueue<>();
    /** Sources polled now; loop thread only. */
    private final List<Source> polled = new ArrayList<>();
    /** Whether pollBegin was called on the polled sources (poll mode); loop thread only. */
    private boolean pollStarted;
    private volatile boolean running = true;
    private volatile boolean sleeping;
    private volatile long iterations;

    /** A source's poll settings. */
    private record Poll(PollHandler handler, PollWindow window) {
    }

    private final class Source implements IoSource {
        final String sourceName;
        final Runnable handler;
        final AtomicBoolean pending = new AtomicBoolean();
        volatile boolean cancelled;
        /** The poll settings asked for; any thread. */
        volatile Poll wanted;
        /** The poll settings in use and whether its pollBegin ran; loop thread only. */
        Poll active;
        boolean begun;
        /** Found work in the current poll window; loop thread only. */
        boolean hit;

        Source(String sourceName, Runnable handler) {
            this.sourceName = sourceName;
            this.handler = handler;
        }

        @Override
        public void setPoll(PollHandler pollHandler, PollWindow window) {
            if ((pollHandler == null) != (window == null)) {
                throw new IllegalArgumentException("a polled source needs both a poll handler and a poll window");
            }
            wanted = pollHandler == null ? null : new Poll(pollHandler, window);
            pollChanges.add(this);
            wake();
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
            if (inLoop()) {
                // Reset from a handler of this loop: end polling now, while the source's queue still exists.
                reconcile(this);
            } else {
                pollChanges.add(this);
                wake();
            }
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
            reconcilePolls();
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
                await();
            }
        }
        setPollStarted(false);
        // Drain tasks submitted before close so nobody waits for them forever.
        Runnable t;
        while ((t = tasks.poll()) != null || (t = endOfIteration.poll()) != null) {
            run(t, "task");
        }
    }

    private boolean nothingPending() {
        return ready.isEmpty() && tasks.isEmpty() && endOfIteration.isEmpty() && pollChanges.isEmpty() && running;
    }

    /**
     * The wait phase: poll (if a window is open), then block until a signal or task; then adjust the windows
     * of the polled sources that became ready (QEMU's adjust_polling_time after aio_poll's wait).
     */
    private void await() {
        if (polled.isEmpty()) {
            park();
            return;
        }
        long start = System.nanoTime();
        long maxNs = 0;
        for (Source s : polled) {
            maxNs = Math.max(maxNs, windowNs(s));
        }
        boolean progress = false;
        if (maxNs > 0 && nothingPending()) {
            setPollStarted(true);
            long elapsed;
            do {
                progress = pollOnce();
                elapsed = System.nanoTime() - start;
            } while (!progress && elapsed < maxNs && nothingPending());
            int misses = !progress && elapsed >= maxNs ? 1 : 0;
            for (Source s : polled) {
                int hits = s.hit ? 1 : 0;
                s.hit = false;
                try {
                    s.active.handler().polled(hits, misses, elapsed);
                } catch (RuntimeException e) {
                    LOG.log(Level.SEVERE, "I/O thread " + name + ": poll account of " + s.sourceName + " failed", e);
                }
            }
        }
        // Leave poll mode before blocking; its last poll catches work that raced with re-enabling.
        if (!progress && !setPollStarted(false)) {
            park();
        }
        long blockNs = System.nanoTime() - start;
        for (int i = 0; i < polled.size(); i++) {
            Source s = polled.get(i);
            if (s.pending.get()) {
                try {
                    s.active.window().update(blockNs);
                } catch (RuntimeException e) {
                    stopPolling(s, "poll window update", e);
                    i--;
                }
            }
        }
    }

    private void park() {
        // Volatile store of sleeping, then volatile loads of the queues (nothingPending): pairs with a
        // signaller's queue insertion (a CAS) followed by its volatile load of sleeping in wake(). Sequential
        // consistency of these accesses means the signaller sees sleeping or this thread sees the work.
        sleeping = true;
        if (nothingPending()) {
            LockSupport.park(this);
        }
        sleeping = false;
    }

    private long windowNs(Source s) {
        try {
            return Math.max(0, s.active.window().pollNs());
        } catch (RuntimeException e) {
            LOG.log(Level.SEVERE, "I/O thread " + name + ": poll window of " + s.sourceName + " failed", e);
            return 0;
        }
    }

    /** Polls every polled source that is not already queued; returns true when one had work. */
    private boolean pollOnce() {
        boolean progress = false;
        for (int i = 0; i < polled.size(); i++) {
            Source s = polled.get(i);
            if (s.pending.get()) {
                continue;
            }
            Boolean work = poll(s);
            if (work == null) {
                i--; // removed from polled
            } else if (work) {
                s.hit = true;
                queue(s);
                progress = true;
            }
        }
        return progress;
    }

    /** The source's poll; {@code null} when it failed and the source no longer polls. */
    private Boolean poll(Source s) {
        try {
            return s.active.handler().poll();
        } catch (RuntimeException e) {
            stopPolling(s, "poll", e);
            return null;
        }
    }

    /** Queues a source found ready by polling, as {@link Source#signal()} would; loop thread only. */
    private void queue(Source s) {
        if (!s.cancelled && s.pending.compareAndSet(false, true)) {
            ready.add(s);
        }
    }

    /**
     * Enters or leaves poll mode: pollBegin or pollEnd on every polled source. Leaving polls each source once
     * more (work that arrived while notifications were off, before they were on again); returns true when
     * that found work.
     */
    private boolean setPollStarted(boolean started) {
        if (started == pollStarted) {
            return false;
        }
        pollStarted = started;
        boolean progress = false;
        for (int i = 0; i < polled.size(); i++) {
            Source s = polled.get(i);
            if (started) {
                if (!begin(s)) {
                    i--;
                }
            } else if (s.begun) {
                s.begun = false;
                if (!end(s)) {
                    i--;
                    continue;
                }
                Boolean work = poll(s);
                if (work == null) {
                    i--;
                } else if (work) {
                    queue(s);
                    progress = true;
                }
            }
        }
        return progress;
    }

    private boolean begin(Source s) {
        try {
            s.active.handler().pollBegin();
            s.begun = true;
            return true;
        } catch (RuntimeException e) {
            stopPolling(s, "pollBegin", e);
            return false;
        }
    }

    private boolean end(Source s) {
        try {
            s.active.handler().pollEnd();
            return true;
        } catch (RuntimeException e) {
            stopPolling(s, "pollEnd", e);
            return false;
        }
    }

    /** A poll callback threw: a device bug. The source is no longer polled; its signals still work. */
    private void stopPolling(Source s, String what, RuntimeException e) {
        LOG.log(Level.SEVERE, "I/O thread " + name + ": " + what + " of " + s.sourceName
                + " failed; the source is no longer polled", e);
        polled.remove(s);
        if (s.begun) {
            s.begun = false;
            try {
                s.active.handler().pollEnd(); // best effort: notifications on again
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
        }
        s.active = null;
        queue(s); // let its handler look at the work it may have
    }

    private void reconcilePolls() {
        Source s;
        while ((s = pollChanges.poll()) != null) {
            reconcile(s);
        }
    }

    /**
     * Brings a source's poll state to what was asked for: a source that stops polling (or was cancelled)
     * gets pollEnd and, unless cancelled, a last poll; a source that starts polling in poll mode gets
     * pollBegin. Loop thread only.
     */
    private void reconcile(Source s) {
        Poll want = s.cancelled ? null : s.wanted;
        Poll old = s.active;
        if (want == old) {
            return;
        }
        if (old != null) {
            polled.remove(s);
            if (s.begun) {
                s.begun = false;
                try {
                    old.handler().pollEnd();
                    if (!s.cancelled && old.handler().poll()) {
                        queue(s);
                    }
                } catch (RuntimeException e) {
                    LOG.log(Level.SEVERE, "I/O thread " + name + ": ending the polling of " + s.sourceName
                            + " failed", e);
                    queue(s);
                }
            }
            s.active = null;
        }
        if (want != null) {
            s.active = want;
            s.hit = false;
            polled.add(s);
            if (pollStarted) {
                begin(s);
            }
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
