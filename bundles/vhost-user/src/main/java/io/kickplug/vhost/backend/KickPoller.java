package io.kickplug.vhost.backend;

import java.io.Closeable;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import org.newsclub.net.unix.AFPipe;
import org.newsclub.net.unix.KickplugPoll;

/**
 * Waits for driver notifications (kick eventfds) of all queues of one connection on a single thread, in
 * poll(2), and hands each kick to {@code onKick} with the queue index. No thread per queue and no spinning:
 * the thread sleeps in the kernel until a kick arrives or the registration changes (a wake-up pipe).
 *
 * <p>{@link #unregister} returns only after the poll thread stopped looking at the descriptor, so the caller
 * may close it without the poll thread touching a reused descriptor number.
 */
public final class KickPoller implements Closeable {

    private static final Logger LOG = System.getLogger(KickPoller.class.getName());
    private static final long CHANGE_TIMEOUT_SECONDS = 10;

    private final String name;
    private final IntConsumer onKick;
    private final AFPipe wakeup;
    private final FileDescriptor wakeupSource;
    private final Thread thread;
    private final Object lock = new Object();
    /** Queue index to its kick descriptor; guarded by {@link #lock}. */
    private final Map<Integer, FileDescriptor> kicks = new TreeMap<>();
    private long generation;
    private long seenGeneration;
    private volatile boolean closed;
    private long kicksSeen;

    public KickPoller(String name, IntConsumer onKick) throws IOException {
        this.name = name;
        this.onKick = onKick;
        this.wakeup = AFPipe.open();
        this.wakeupSource = wakeup.source().getFileDescriptor();
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Watches {@code fd} as the kick of queue {@code queue}, replacing (not closing) an earlier one. */
    public void register(int queue, FileDescriptor fd) {
        change(() -> kicks.put(queue, fd));
    }

    /** Stops watching queue {@code queue}'s kick; afterwards the poll thread no longer uses it. */
    public void unregister(int queue) {
        change(() -> kicks.remove(queue));
    }

    /** Kicks read so far. */
    public long kicksSeen() {
        synchronized (lock) {
            return kicksSeen;
        }
    }

    private void change(Runnable edit) {
        long target;
        synchronized (lock) {
            edit.run();
            target = ++generation;
        }
        wake();
        if (Thread.currentThread() == thread) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CHANGE_TIMEOUT_SECONDS);
        synchronized (lock) {
            while (seenGeneration < target && !closed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.log(Level.ERROR, name + ": the kick poller did not take a registration change in "
                            + CHANGE_TIMEOUT_SECONDS + " s");
                    return;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void wake() {
        try {
            wakeup.sink().write(ByteBuffer.wrap(new byte[] {1}));
        } catch (IOException e) {
            if (!closed) {
                LOG.log(Level.WARNING, name + ": cannot wake the kick poller: " + e.getMessage());
            }
        }
    }

    private void run() {
        int[] queues = new int[0];
        FileDescriptor[] fds = new FileDescriptor[] {wakeupSource};
        FileInputStream[] streams = new FileInputStream[0];
        int[] ready = new int[1];
        byte[] counter = new byte[8];
        ByteBuffer drain = ByteBuffer.allocate(64);
        long seen = -1;
        while (!closed) {
            synchronized (lock) {
                if (seen != generation) {
                    seen = generation;
                    queues = kicks.keySet().stream().mapToInt(Integer::intValue).toArray();
                    fds = new FileDescriptor[queues.length + 1];
                    streams = new FileInputStream[queues.length];
                    fds[0] = wakeupSource;
                    for (int i = 0; i < queues.length; i++) {
                        fds[i + 1] = kicks.get(queues[i]);
                        streams[i] = new FileInputStream(fds[i + 1]);
                    }
                    ready = new int[fds.length];
                    seenGeneration = seen;
                    lock.notifyAll();
                }
            }
            try {
                KickplugPoll.poll(fds, ready, -1);
            } catch (IOException e) {
                if (!closed) {
                    // EINTR and friends: poll again.
                    LOG.log(Level.DEBUG, name + ": poll failed: " + e.getMessage());
                }
                continue;
            }
            if (closed) {
                break;
            }
            if (ready[0] != 0) {
                try {
                    drain.clear();
                    wakeup.source().read(drain);
                } catch (IOException e) {
                    LOG.log(Level.WARNING, name + ": cannot drain the wake-up pipe: " + e.getMessage());
                }
            }
            for (int i = 0; i < queues.length; i++) {
                if (ready[i + 1] == 0) {
                    continue;
                }
                int q = queues[i];
                int n;
                try {
                    // An eventfd read returns the 8-byte counter and resets it (eventfd(2)).
                    n = streams[i].read(counter);
                } catch (IOException e) {
                    n = 0; // EAGAIN: another reader took it, or a spurious wake-up
                }
                if (n < 0 || (n == 0 && (ready[i + 1] & KickplugPoll.INVALID) != 0)) {
                    LOG.log(Level.WARNING, name + ": kick descriptor of queue " + q + " (" + describe(fds[i + 1])
                            + ") reports " + (n < 0 ? "end of file" : "an error or hang-up")
                            + "; the queue gets no more notifications until a new one is set");
                    dropIfCurrent(q, fds[i + 1]);
                    continue;
                }
                if (n > 0) {
                    synchronized (lock) {
                        kicksSeen++;
                    }
                    try {
                        onKick.accept(q);
                    } catch (RuntimeException e) {
                        LOG.log(Level.ERROR, name + ": handling a kick of queue " + q + " failed", e);
                    }
                }
            }
        }
    }

    private static String describe(FileDescriptor fd) {
        try {
            return java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/fd/"
                    + io.kickplug.vhost.protocol.Fds.number(fd))).toString();
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private void dropIfCurrent(int queue, FileDescriptor fd) {
        synchronized (lock) {
            if (kicks.get(queue) == fd) {
                kicks.remove(queue);
                generation++;
            }
        }
    }

    /** Stops the thread; does not close the registered descriptors (their owner does). */
    @Override
    public void close() {
        closed = true;
        wake();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(CHANGE_TIMEOUT_SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (lock) {
            lock.notifyAll();
        }
        try {
            wakeup.close();
        } catch (IOException e) {
            LOG.log(Level.DEBUG, name + ": closing the wake-up pipe: " + e.getMessage());
        }
    }
}
