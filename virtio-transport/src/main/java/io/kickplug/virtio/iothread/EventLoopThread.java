package io.kickplug.virtio.iothread;

import io.kickplug.api.iothread.DescriptorPoller;
import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.iothread.PollHandler;
import io.kickplug.api.poll.PollWindow;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
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
 *
 * <p>Descriptors (QEMU's AioContext fd handlers, issue 12): sources registered with
 * {@link #registerDescriptor} are waited on by this thread itself, in one poll(2) over their descriptors plus a
 * wake-up descriptor; a readable descriptor's counter is read and its handler runs in the same iteration, so a
 * vhost-user kick costs one wake-up. While the loop has descriptor sources it sleeps in that poll instead of
 * parking; {@link IoSource#signal()}, tasks and {@link #close()} then write the wake-up descriptor, and only when
 * the loop sleeps or is about to, once per sleep ({@code sleeping}). A loop that keeps
 * finding work looks at the descriptors without blocking every few iterations, so it still sees kicks.
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

    /** Registration state of descriptor sources, shared with registering threads; under {@link #descriptorLock}. */
    private final Object descriptorLock = new Object();
    private DescriptorPoller poller;
    private int descriptorSources;
    /** The wake-up descriptor while the loop has descriptor sources; written under the lock, read by wake(). */
    private volatile DescriptorPoller.Wakeup wakeup;
    /** Descriptor sources added or cancelled; reconciled by the loop at the start of an iteration. */
    private final ConcurrentLinkedQueue<Source> descriptorChanges = new ConcurrentLinkedQueue<>();
    /** Descriptor sources the loop waits on, and the poll set over the wake-up and theirs; loop thread only. */
    private final List<Source> watched = new ArrayList<>();
    private DescriptorPoller.PollSet pollSet;
    private DescriptorPoller.Wakeup pollSetWakeup;
    private final byte[] counter = new byte[64];
    /**
     * Iterations with work since the loop last waited; every {@value #BUSY_ITERATIONS_PER_LOOK}th looks at the
     * descriptors without blocking. Not every one: at queue depth 1 that extra poll(2) was a syscall per request.
     */
    private int busyIterations;
    private static final int BUSY_ITERATIONS_PER_LOOK = 16;
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
        /** A descriptor source's descriptor, its reader and what runs after each read; null otherwise. */
        final FileDescriptor fd;
        final FileInputStream reader;
        final Runnable onRead;
        /** Whether the loop waits on {@link #fd}; loop thread only. */
        boolean watching;
        /** A descriptor source not yet taken off the registration count ({@code descriptorSources}); loop only. */
        boolean counted;
        /** Set by the loop once a cancelled descriptor source is no longer watched (cancel() waits for it). */
        volatile boolean released;

        Source(String sourceName, Runnable handler) {
            this(sourceName, handler, null, null);
        }

        Source(String sourceName, Runnable handler, FileDescriptor fd, Runnable onRead) {
            this.sourceName = sourceName;
            this.handler = handler;
            this.fd = fd;
            this.reader = fd == null ? null : new FileInputStream(fd); // never closed: the owner closes fd
            this.onRead = onRead;
            this.counted = fd != null;
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
                if (fd != null) {
                    unwatch(this);
                    released = true;
                }
            } else {
                pollChanges.add(this);
                if (fd != null) {
                    descriptorChanges.add(this);
                    wake();
                    awaitReleased(this);
                } else {
                    wake();
                }
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
    public boolean waitsOnDescriptors() {
        return true;
    }

    @Override
    public IoSource registerDescriptor(String sourceName, FileDescriptor fd, DescriptorPoller descriptorPoller,
            Runnable onRead, Runnable handler) {
        if (fd == null || descriptorPoller == null || handler == null) {
            throw new IllegalArgumentException("a descriptor source needs a descriptor, a poller and a handler");
        }
        synchronized (descriptorLock) {
            if (!running) {
                throw new IllegalStateException("I/O thread " + name + " is stopped");
            }
            if (poller != null && poller != descriptorPoller) {
                throw new IllegalStateException("I/O thread " + name + " already waits with another poller");
            }
            if (wakeup == null) {
                try {
                    wakeup = descriptorPoller.openWakeup();
                } catch (IOException e) {
                    throw new IllegalStateException("I/O thread " + name + ": no wake-up descriptor: " + e.getMessage(),
                            e);
                }
            }
            poller = descriptorPoller;
            descriptorSources++;
        }
        Source s = new Source(sourceName, handler, fd, onRead);
        descriptorChanges.add(s);
        wake();
        return s;
    }

    /** Waits until the loop no longer watches the cancelled source's descriptor (or stopped), at most 10 s. */
    private void awaitReleased(Source s) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        synchronized (descriptorLock) {
            while (!s.released && running && thread.isAlive()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.log(Level.SEVERE, "I/O thread " + name + " did not stop watching a descriptor in 10 s");
                    return;
                }
                try {
                    // In slices: a loop that stops meanwhile does not notify again.
                    TimeUnit.NANOSECONDS.timedWait(descriptorLock, Math.min(left, TimeUnit.MILLISECONDS.toNanos(10)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
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

    /**
     * Wakes the loop if it sleeps or is about to: the caller's enqueue (a CAS or volatile write) comes before
     * this volatile read of {@code sleeping}, and the loop's store of {@code sleeping} before its re-check of the
     * queues, so one of the two sees the other (see park()). In a descriptor wait only the first waker of a
     * sleep writes the wake-up descriptor (its CAS from POLLING to WOKEN).
     */
    private void wake() {
        int how = sleeping;
        if (how == PARKED) {
            LockSupport.unpark(thread);
        } else if (how == POLLING && SLEEPING.compareAndSet(this, POLLING, WOKEN)) {
            DescriptorPoller.Wakeup w = wakeup;
            if (w != null) {
                w.signal();
            }
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
            reconcileDescriptors();
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
                busyIterations = 0;
                await();
            } else if (!watched.isEmpty() && ++busyIterations % BUSY_ITERATIONS_PER_LOOK == 0) {
                waitOnDescriptors(false); // a loop that never runs out of work still sees kicks
            }
        }
        setPollStarted(false);
        synchronized (descriptorLock) {
            // A stopped loop watches nothing: let cancel() callers go.
            descriptorLock.notifyAll();
            if (wakeup != null) {
                wakeup.close();
                wakeup = null;
            }
        }
        // Drain tasks submitted before close so nobody waits for them forever.
        Runnable t;
        while ((t = tasks.poll()) != null || (t = endOfIteration.poll()) != null) {
            run(t, "task");
        }
    }

    private boolean nothingPending() {
        return ready.isEmpty() && tasks.isEmpty() && endOfIteration.isEmpty() && pollChanges.isEmpty()
                && descriptorChanges.isEmpty() && running;
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
        if (!watched.isEmpty()) {
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
     * descriptor that reports an error or hang-up with nothing to read is no longer watched. Loop thread only.
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
        try {
            pollSet.await(timeout);
        } catch (IOException e) {
            // EINTR and the like: the next iteration waits again.
            LOG.log(Level.FINE, "I/O thread " + name + ": poll failed: " + e.getMessage());
            sleeping = AWAKE;
            return;
        }
        // Ends this sleep for wakers: none can win the CAS to WOKEN any more. A byte a waker of this sleep writes
        // after the drain below stays in the pipe and ends the next wait at once (harmless).
        sleeping = AWAKE;
        if ((pollSet.ready(0) & DescriptorPoller.READABLE) != 0) {
            pollSetWakeup.drain();
        }
        for (int i = 0; i < watched.size(); i++) {
            int events = pollSet.ready(i + 1);
            if (events == 0) {
                continue;
            }
            Source s = watched.get(i);
            int n;
            try {
                // An eventfd read returns its 8-byte counter and resets it (eventfd(2)); a pipe gives what it has.
                n = s.reader.read(counter);
            } catch (IOException e) {
                n = 0; // EAGAIN on a non-blocking eventfd: nothing there after all
            }
            if (n > 0) {
                if (s.onRead != null) {
                    run(s.onRead, "descriptor read of " + s.sourceName);
                }
                queue(s);
            } else if (n < 0 || (events & DescriptorPoller.FAILED) != 0) {
                LOG.log(Level.WARNING, "I/O thread " + name + ": descriptor of " + s.sourceName + " reports "
                        + (n < 0 ? "end of file" : "an error or hang-up") + "; it is no longer watched");
                s.watching = false;
                watched.remove(i);
                i--;
                rebuildPollSet();
            }
        }
    }

    /** Takes descriptor sources added or cancelled by other threads; loop thread only. */
    private void reconcileDescriptors() {
        if (descriptorChanges.isEmpty()) {
            return;
        }
        Source s;
        boolean changed = false;
        List<Source> released = null;
        while ((s = descriptorChanges.poll()) != null) {
            if (s.cancelled) {
                changed |= unwatchQuietly(s);
                if (released == null) {
                    released = new ArrayList<>();
                }
                released.add(s);
            } else if (!s.watching) {
                s.watching = true;
                watched.add(s);
                changed = true;
            }
        }
        if (changed) {
            rebuildPollSet();
        }
        if (released != null) {
            synchronized (descriptorLock) {
                for (Source r : released) {
                    r.released = true;
                }
                descriptorLock.notifyAll();
            }
        }
    }

    /** A descriptor source cancelled on the loop thread: no longer watched from now on. */
    private void unwatch(Source s) {
        if (unwatchQuietly(s)) {
            rebuildPollSet();
        }
    }

    private boolean unwatchQuietly(Source s) {
        boolean was = s.watching;
        if (was) {
            s.watching = false;
            watched.remove(s);
        }
        if (!s.counted) {
            return was;
        }
        s.counted = false;
        synchronized (descriptorLock) {
            descriptorSources--;
        }
        return true;
    }

    /** Makes the poll set match {@link #watched}; with none left, closes the wake-up descriptor. Loop only. */
    private void rebuildPollSet() {
        DescriptorPoller.Wakeup w;
        DescriptorPoller p;
        synchronized (descriptorLock) {
            if (descriptorSources == 0 && watched.isEmpty()) {
                w = wakeup;
                wakeup = null;
                poller = null;
                pollSet = null;
                pollSetWakeup = null;
                if (w != null) {
                    w.close();
                }
                return;
            }
            w = wakeup;
            p = poller;
        }
        if (watched.isEmpty()) {
            pollSet = null; // sources registered but not taken yet: park until they are
            pollSetWakeup = w;
            return;
        }
        FileDescriptor[] fds = new FileDescriptor[watched.size() + 1];
        fds[0] = w.fd();
        for (int i = 0; i < watched.size(); i++) {
            fds[i + 1] = watched.get(i).fd;
        }
        pollSet = p.pollSet(fds);
        pollSetWakeup = w;
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
        DescriptorPoller.Wakeup w = wakeup;
        if (w != null) {
            w.signal();
        }
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
