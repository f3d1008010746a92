package io.kickplug.virtio.iothread;

import io.kickplug.api.iothread.DescriptorPoller;
import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.iothread.PollHandler;
import java.io.FileDescriptor;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
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
 *
 * <p>Descriptors (QEMU's AioContext fd handlers, issue 12): sources registered with
 * {@link #registerDescriptor} are waited on by this thread itself, in one poll(2) over their descriptors plus a
 * wake-up descriptor; a readable descriptor's counter is read and its handler runs in the same iteration, so a
 * vhost-user kick costs one wake-up. While the loop has descriptor sources it sleeps in that poll instead of
 * parking; {@link IoSource#signal()}, tasks and {@link #close()} then write the wake-up descriptor, and only when
 * the loop sleeps or is about to, once per sleep ({@code sleeping}). A loop that keeps
 * finding work looks at the descriptors without blocking every few iterations, so it still sees kicks.
 * {@link LoopDescriptors} holds the descriptor sources, their poll set and reads; {@link LoopSource} is a source.
 */
public final class EventLoopThread implements IoThread {
    private static final Logger LOG = Logger.getLogger(EventLoopThread.class.getName());
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final String name;
    private final Thread thread;
    private final ConcurrentLinkedQueue<LoopSource> ready = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Runnable> endOfIteration = new ConcurrentLinkedQueue<>();
    /** Sources whose poll settings changed or that were cancelled; reconciled by the loop. */
    private final ConcurrentLinkedQueue<LoopSource> pollChanges = new ConcurrentLinkedQueue<>();
    /** Sources polled now; loop thread only. */
    private final List<LoopSource> polled = new ArrayList<>();
    /** Whether pollBegin was called on the polled sources (poll mode); loop thread only. */
    private boolean pollStarted;
    private volatile boolean running = true;
    /**
     * {@link #AWAKE}, {@link #PARKED} or {@link #POLLING}: how the loop sleeps, or is about to; {@link #WOKEN}: it
     * sleeps in poll and a waker has written (or is writing) the wake-up descriptor for this sleep. The loop
     * stores AWAKE after each sleep, so a waker's CAS from POLLING to WOKEN succeeds only within one sleep: a
     * late waker cannot leave a stale "already woken" behind for the next one.
     */
    private volatile int sleeping;
    private static final int AWAKE = 0;
    private static final int PARKED = 1;
    private static final int POLLING = 2;
    private static final int WOKEN = 3;
    private static final VarHandle SLEEPING;

    static {
        try {
            SLEEPING = MethodHandles.lookup().findVarHandle(EventLoopThread.class, "sleeping", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The descriptor sources: registration, the poll set and the reads of readable descriptors. */
    private final LoopDescriptors descriptors = new LoopDescriptors(this);
    /**
     * Iterations with work since the loop last waited; every {@value #BUSY_ITERATIONS_PER_LOOK}th looks at the
     * descriptors without blocking. Not every one: at queue depth 1 that extra poll(2) was a syscall per request.
     */
    private int busyIterations;
    private static final int BUSY_ITERATIONS_PER_LOOK = 16;
    private volatile long iterations;

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
        return new LoopSource(this, sourceName, handler);
    }

    @Override
    public boolean waitsOnDescriptors() {
        return true;
    }

    @Override
    public IoSource registerDescriptor(String sourceName, FileDescriptor fd, DescriptorPoller descriptorPoller,
            Runnable onRead, Runnable handler) {
        return descriptors.register(sourceName, fd, descriptorPoller, onRead, handler);
    }

    /** {@link LoopSource#setPoll}: its poll settings changed. */
    void pollChanged(LoopSource s) {
        pollChanges.add(s);
        wake();
    }

    /** {@link LoopSource#signal}: the source was not pending and is now. */
    void signalled(LoopSource s) {
        ready.add(s);
        wake();
    }

    /** {@link LoopSource#cancel}, after it set {@code cancelled}. */
    void cancelled(LoopSource s) {
        if (inLoop()) {
            // Reset from a handler of this loop: end polling now, while the source's queue still exists.
            reconcile(s);
            if (s.fd != null) {
                descriptors.unwatch(s);
                s.released = true;
            }
        } else {
            pollChanges.add(s);
            if (s.fd != null) {
                descriptors.cancelElsewhere(s);
            } else {
                wake();
            }
        }
    }

    @Override
    public void execute(Runnable task) {
        enqueue(tasks, task);
    }

    @Override
    public void executeAtEndOfIteration(Runnable task) {
        enqueue(endOfIteration, task);
    }

    /** Queues {@code task} on {@code queue} (tasks or end-of-iteration tasks) and wakes the loop. */
    private void enqueue(ConcurrentLinkedQueue<Runnable> queue, Runnable task) {
        if (!running) {
            throw new IllegalStateException("I/O thread " + name + " is stopped");
        }
        queue.add(task);
        wake();
    }

    /**
     * Wakes the loop if it sleeps or is about to: the caller's enqueue (a CAS or volatile write) comes before
     * this volatile read of {@code sleeping}, and the loop's store of {@code sleeping} before its re-check of the
     * queues, so one of the two sees the other (see park()). In a descriptor wait only the first waker of a
     * sleep writes the wake-up descriptor (its CAS from POLLING to WOKEN).
     */
    void wake() {
        int how = sleeping;
        if (how == PARKED) {
            LockSupport.unpark(thread);
        } else if (how == POLLING && SLEEPING.compareAndSet(this, POLLING, WOKEN)) {
            descriptors.signalWakeup();
        }
    }

    @Override
    public boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    boolean running() {
        return running;
    }

    boolean alive() {
        return thread.isAlive();
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
            descriptors.reconcile();
            reconcilePolls();
            boolean worked = false;
            // Run the sources signalled so far; a source signalled while it runs is queued again and runs
            // in the next iteration.
            for (int n = ready.size(); n > 0; n--) {
                LoopSource s = ready.poll();
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
                busyIterations = 0;
                await();
            } else if (descriptors.watching() && ++busyIterations % BUSY_ITERATIONS_PER_LOOK == 0) {
                waitOnDescriptors(false); // a loop that never runs out of work still sees kicks
            }
        }
        setPollStarted(false);
        descriptors.stopped(); // a stopped loop watches nothing: cancel() callers may go
        // Drain tasks submitted before close so nobody waits for them forever.
        Runnable t;
        while ((t = tasks.poll()) != null || (t = endOfIteration.poll()) != null) {
            run(t, "task");
        }
    }

    private boolean nothingPending() {
        return ready.isEmpty() && tasks.isEmpty() && endOfIteration.isEmpty() && pollChanges.isEmpty()
                && !descriptors.changesPending() && running;
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
        for (LoopSource s : polled) {
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
            for (LoopSource s : polled) {
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
            LoopSource s = polled.get(i);
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
        if (descriptors.watching()) {
            waitOnDescriptors(true);
            return;
        }
        // Volatile store of sleeping, then volatile loads of the queues (nothingPending): pairs with a
        // signaller's queue insertion (a CAS) followed by its volatile load of sleeping in wake(). Sequential
        // consistency of these accesses means the signaller sees sleeping or this thread sees the work.
        sleeping = PARKED;
        if (nothingPending()) {
            LockSupport.park(this);
        }
        sleeping = AWAKE;
    }

    /**
     * One poll(2) over the wake-up descriptor and every watched descriptor: blocking (when {@code block} and
     * nothing is pending) or not. Each readable descriptor's counter is read (reset) and its source queued; a
     * descriptor that reports an error or hang-up with nothing to read is no longer watched
     * ({@link LoopDescriptors#readReady}). Loop thread only.
     */
    private void waitOnDescriptors(boolean block) {
        int timeout = 0;
        if (block) {
            // Volatile store, then the volatile loads of nothingPending(): the same pairing as park()'s with a
            // signaller's enqueue followed by its read of sleeping in wake().
            sleeping = POLLING;
            if (nothingPending()) {
                timeout = -1;
            }
        }
        if (!descriptors.poll(timeout)) {
            sleeping = AWAKE; // the poll failed: the next iteration waits again
            return;
        }
        // Ends this sleep for wakers: none can win the CAS to WOKEN any more. A byte a waker of this sleep writes
        // after the drain in readReady() stays in the pipe and ends the next wait at once (harmless).
        sleeping = AWAKE;
        descriptors.readReady();
    }

    private long windowNs(LoopSource s) {
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
            LoopSource s = polled.get(i);
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
    private Boolean poll(LoopSource s) {
        try {
            return s.active.handler().poll();
        } catch (RuntimeException e) {
            stopPolling(s, "poll", e);
            return null;
        }
    }

    /** Queues a source found ready by polling, as {@link LoopSource#signal()} would; loop thread only. */
    void queue(LoopSource s) {
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
            LoopSource s = polled.get(i);
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

    private boolean begin(LoopSource s) {
        try {
            s.active.handler().pollBegin();
            s.begun = true;
            return true;
        } catch (RuntimeException e) {
            stopPolling(s, "pollBegin", e);
            return false;
        }
    }

    private boolean end(LoopSource s) {
        try {
            s.active.handler().pollEnd();
            return true;
        } catch (RuntimeException e) {
            stopPolling(s, "pollEnd", e);
            return false;
        }
    }

    /** A poll callback threw: a device bug. The source is no longer polled; its signals still work. */
    private void stopPolling(LoopSource s, String what, RuntimeException e) {
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
        LoopSource s;
        while ((s = pollChanges.poll()) != null) {
            reconcile(s);
        }
    }

    /**
     * Brings a source's poll state to what was asked for: a source that stops polling (or was cancelled)
     * gets pollEnd and, unless cancelled, a last poll; a source that starts polling in poll mode gets
     * pollBegin. Loop thread only.
     */
    private void reconcile(LoopSource s) {
        LoopSource.Poll want = s.cancelled ? null : s.wanted;
        LoopSource.Poll old = s.active;
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

    void run(Runnable r, String what) {
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
        descriptors.signalWakeup();
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
