package io.kickplug.virtio.iothread;

import io.kickplug.api.iothread.DescriptorPoller;
import java.io.FileDescriptor;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The descriptor sources of one {@link EventLoopThread} (QEMU's AioContext fd handlers, issue 12): their
 * registration from any thread, the poll set over the wake-up descriptor and theirs, and the loop's reads of
 * the descriptors that became readable. How the loop sleeps in that poll and who writes the wake-up descriptor
 * (the {@code sleeping} protocol) stays in {@link EventLoopThread}.
 *
 * <p>Registration state is shared with registering and cancelling threads under {@link #lock}; the watched list
 * and the poll set are the loop thread's alone.
 */
final class LoopDescriptors {
    private static final Logger LOG = Logger.getLogger(EventLoopThread.class.getName());

    private final EventLoopThread loop;
    /** Registration state of descriptor sources, shared with registering threads; under {@link #lock}. */
    private final Object lock = new Object();
    private DescriptorPoller poller;
    private int registered;
    /** The wake-up descriptor while the loop has descriptor sources; written under the lock, read by wake(). */
    private volatile DescriptorPoller.Wakeup wakeup;
    /** Descriptor sources added or cancelled; reconciled by the loop at the start of an iteration. */
    private final ConcurrentLinkedQueue<LoopSource> changes = new ConcurrentLinkedQueue<>();
    /** Descriptor sources the loop waits on, and the poll set over the wake-up and theirs; loop thread only. */
    private final List<LoopSource> watched = new ArrayList<>();
    private DescriptorPoller.PollSet pollSet;
    private DescriptorPoller.Wakeup pollSetWakeup;
    private final byte[] counter = new byte[64];

    LoopDescriptors(EventLoopThread loop) {
        this.loop = loop;
    }

    /** {@link EventLoopThread#registerDescriptor}: a new descriptor source the loop takes at its next iteration. */
    LoopSource register(String sourceName, FileDescriptor fd, DescriptorPoller descriptorPoller, Runnable onRead,
            Runnable handler) {
        if (fd == null || descriptorPoller == null || handler == null) {
            throw new IllegalArgumentException("a descriptor source needs a descriptor, a poller and a handler");
        }
        synchronized (lock) {
            if (!loop.running()) {
                throw new IllegalStateException("I/O thread " + loop.name() + " is stopped");
            }
            if (poller != null && poller != descriptorPoller) {
                throw new IllegalStateException("I/O thread " + loop.name() + " already waits with another poller");
            }
            if (wakeup == null) {
                try {
                    wakeup = descriptorPoller.openWakeup();
                } catch (IOException e) {
                    throw new IllegalStateException("I/O thread " + loop.name() + ": no wake-up descriptor: "
                            + e.getMessage(), e);
                }
            }
            poller = descriptorPoller;
            registered++;
        }
        LoopSource s = new LoopSource(loop, sourceName, handler, fd, onRead);
        changes.add(s);
        loop.wake();
        return s;
    }

    /** A descriptor source cancelled on another thread: returns once the loop no longer watches it. */
    void cancelElsewhere(LoopSource s) {
        changes.add(s);
        loop.wake();
        awaitReleased(s);
    }

    /** Waits until the loop no longer watches the cancelled source's descriptor (or stopped), at most 10 s. */
    private void awaitReleased(LoopSource s) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        synchronized (lock) {
            while (!s.released && loop.running() && loop.alive()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.log(Level.SEVERE, "I/O thread " + loop.name() + " did not stop watching a descriptor in 10 s");
                    return;
                }
                try {
                    // In slices: a loop that stops meanwhile does not notify again.
                    TimeUnit.NANOSECONDS.timedWait(lock, Math.min(left, TimeUnit.MILLISECONDS.toNanos(10)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** Whether the loop waits on descriptors (then it sleeps in {@link #poll}); loop thread only. */
    boolean watching() {
        return !watched.isEmpty();
    }

    /** Whether sources were added or cancelled since the loop last took them (a volatile read). */
    boolean changesPending() {
        return !changes.isEmpty();
    }

    /** Writes the wake-up descriptor, if the loop has one. */
    void signalWakeup() {
        DescriptorPoller.Wakeup w = wakeup;
        if (w != null) {
            w.signal();
        }
    }

    /**
     * One poll(2) over the wake-up descriptor and every watched descriptor ({@code timeout} -1: blocking, 0: not);
     * false when it failed (EINTR and the like: the next iteration waits again). Loop thread only.
     */
    boolean poll(int timeout) {
        try {
            pollSet.await(timeout);
            return true;
        } catch (IOException e) {
            LOG.log(Level.FINE, "I/O thread " + loop.name() + ": poll failed: " + e.getMessage());
            return false;
        }
    }

    /**
     * After {@link #poll}: drains the wake-up descriptor, reads (resets) each readable descriptor's counter and
     * queues its source; a descriptor that reports an error or hang-up with nothing to read is no longer watched.
     * Loop thread only.
     */
    void readReady() {
        if ((pollSet.ready(0) & DescriptorPoller.READABLE) != 0) {
            pollSetWakeup.drain();
        }
        for (int i = 0; i < watched.size(); i++) {
            int events = pollSet.ready(i + 1);
            if (events == 0) {
                continue;
            }
            LoopSource s = watched.get(i);
            int n;
            try {
                // An eventfd read returns its 8-byte counter and resets it (eventfd(2)); a pipe gives what it has.
                n = s.reader.read(counter);
            } catch (IOException e) {
                n = 0; // EAGAIN on a non-blocking eventfd: nothing there after all
            }
            if (n > 0) {
                if (s.onRead != null) {
                    runOnRead(s);
                }
                loop.queue(s);
            } else if (n < 0 || (events & DescriptorPoller.FAILED) != 0) {
                LOG.log(Level.WARNING, "I/O thread " + loop.name() + ": descriptor of " + s.sourceName + " reports "
                        + (n < 0 ? "end of file" : "an error or hang-up") + "; it is no longer watched");
                s.watching = false;
                watched.remove(i);
                i--;
                rebuildPollSet();
            }
        }
    }

    /** A source's read callback; its failure is logged as {@link EventLoopThread#run} would (no string per read). */
    private void runOnRead(LoopSource s) {
        try {
            s.onRead.run();
        } catch (Throwable e) {
            LOG.log(Level.SEVERE, "I/O thread " + loop.name() + ": descriptor read of " + s.sourceName + " failed", e);
        }
    }

    /** Takes descriptor sources added or cancelled by other threads; loop thread only. */
    void reconcile() {
        if (changes.isEmpty()) {
            return;
        }
        LoopSource s;
        boolean changed = false;
        List<LoopSource> released = null;
        while ((s = changes.poll()) != null) {
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
            synchronized (lock) {
                for (LoopSource r : released) {
                    r.released = true;
                }
                lock.notifyAll();
            }
        }
    }

    /** A descriptor source cancelled on the loop thread: no longer watched from now on. */
    void unwatch(LoopSource s) {
        if (unwatchQuietly(s)) {
            rebuildPollSet();
        }
    }

    private boolean unwatchQuietly(LoopSource s) {
        boolean was = s.watching;
        if (was) {
            s.watching = false;
            watched.remove(s);
        }
        if (!s.counted) {
            return was;
        }
        s.counted = false;
        synchronized (lock) {
            registered--;
        }
        return true;
    }

    /** Makes the poll set match {@link #watched}; with none left, closes the wake-up descriptor. Loop only. */
    private void rebuildPollSet() {
        DescriptorPoller.Wakeup w;
        DescriptorPoller p;
        synchronized (lock) {
            if (registered == 0 && watched.isEmpty()) {
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

    /** The loop stopped: it watches nothing, so cancel() callers may go; the wake-up descriptor closes. */
    void stopped() {
        synchronized (lock) {
            lock.notifyAll();
            if (wakeup != null) {
                wakeup.close();
                wakeup = null;
            }
        }
    }
}
