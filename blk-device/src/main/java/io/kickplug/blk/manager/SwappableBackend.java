package io.kickplug.blk.manager;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendIo;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * A disk's asynchronous backend from another bundle (NBD), as the disk's devices see it: one object for the
 * disk's life, whose backend underneath can go and come back. When the bundle that opened it goes,
 * {@link #suspend} holds new requests, waits for those in flight to complete and closes the backend; when a
 * factory of the kind is back, {@link #resume} puts the newly opened backend in (same size required) and sends
 * it the held requests. The guest sees a pause, no error, and nothing is lost. The backend's facts (kind, size,
 * features) are those it had when opened, so the device keeps answering while it is away. Thread-safe.
 */
final class SwappableBackend implements AsyncBlockBackend {

    private static final Logger LOG = System.getLogger(SwappableBackend.class.getName());

    private final String disk;
    private final String kind;
    private final boolean readOnly;
    private final boolean discard;
    private final boolean writeZeroes;
    private final boolean fua;
    private volatile long size;
    private final Object lock = new Object();
    /**
     * The backend now, {@code null} while suspended. Written under lock; volatile for {@link #submit}'s check,
     * after its hand-over, that the backend it submitted to is still the one the device's unplug reaches.
     */
    private volatile AsyncBlockBackend current;
    private boolean closed;
    /** The disk is being taken down: requests that would be held fail instead. Under lock. */
    private boolean failing;
    /** Requests submitted to {@link #current} and not completed. Under lock. */
    private int inFlight;
    /** Requests that arrived while suspended, oldest first. Under lock. */
    private final ArrayDeque<BackendIo> held = new ArrayDeque<>();
    /** Reused completion counters (a submission allocates nothing once the pool has warmed up). Under lock. */
    private final ArrayDeque<Counted> free = new ArrayDeque<>();
    /** Told when the storage changes size by itself ({@link #watchSize}); handed to each backend that comes. */
    private volatile LongConsumer sizeListener;

    SwappableBackend(String disk, AsyncBlockBackend backend) {
        this.disk = disk;
        this.current = backend;
        this.kind = backend.kind();
        this.size = backend.size();
        this.readOnly = backend.readOnly();
        this.discard = backend.supportsDiscard();
        this.writeZeroes = backend.supportsWriteZeroes();
        this.fua = backend.supportsFua();
    }

    @Override
    public void submit(BackendIo io) {
        AsyncBlockBackend b;
        Counted c;
        boolean fail = false;
        synchronized (lock) {
            b = current;
            if (b == null) {
                if (closed || failing) {
                    fail = true;
                } else {
                    held.add(io);
                }
                c = null;
            } else {
                inFlight++;
                c = take(io);
            }
        }
        if (fail) {
            io.complete(new IOException("disk " + disk + ": the backend is closed"));
        } else if (c != null) {
            b.submit(c);
            // A backend that batches until unplug (NBD) may hold c. If a suspension took b away meanwhile, the
            // device's unplug() reaches the next backend (or none), and suspend()'s own unplug of b may have come
            // before c was in b's batch: c would wait there until suspend's timeout closed b and failed it. So
            // whoever comes second unplugs b: suspend's unplug follows its volatile write of current, this read
            // follows b.submit(c); one of the two sees the other.
            if (current != b) {
                b.unplug();
            }
        }
    }

    private Counted take(BackendIo io) {
        Counted c = free.poll();
        if (c == null) {
            c = new Counted();
        }
        c.io = io;
        return c;
    }

    @Override
    public void unplug() {
        AsyncBlockBackend b;
        synchronized (lock) {
            b = current;
        }
        if (b != null) {
            b.unplug();
        }
    }

    /** True while the backend is away (requests are held). */
    boolean suspended() {
        synchronized (lock) {
            return current == null && !closed;
        }
    }

    /** Requests held now (for tests and diagnostics). */
    int held() {
        synchronized (lock) {
            return held.size();
        }
    }

    /**
     * The backend's bundle goes: new requests are held from now on, those in flight complete (waited for, at most
     * {@code timeoutMs}; then the close fails what is left), and the backend closes. Idempotent.
     */
    void suspend(long timeoutMs) {
        AsyncBlockBackend b;
        synchronized (lock) {
            b = current;
            current = null;
        }
        if (b == null) {
            return;
        }
        b.unplug(); // what it held back for a batch goes out, so it can complete
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        synchronized (lock) {
            while (inFlight > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.log(Level.WARNING, "disk " + disk + ": " + inFlight + " requests still in flight after "
                            + timeoutMs + " ms; closing the backend fails them");
                    break;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        closeQuietly(b, "the suspended backend");
    }

    /**
     * A newly opened backend takes over and gets the held requests. Refused (and closed) when its size differs
     * or this backend was closed meanwhile.
     *
     * @return whether {@code backend} took over
     */
    boolean resume(AsyncBlockBackend backend) {
        if (backend.size() != size) {
            LOG.log(Level.ERROR, "disk " + disk + ": the reopened " + kind + " backend has " + backend.size()
                    + " bytes, not " + size + "; requests stay held");
            closeQuietly(backend, "a refused backend");
            return false;
        }
        List<Counted> out = new ArrayList<>();
        synchronized (lock) {
            if (closed || current != null) {
                out = null;
            } else {
                current = backend;
                while (!held.isEmpty()) {
                    out.add(take(held.poll()));
                    inFlight++;
                }
            }
        }
        if (out == null) {
            closeQuietly(backend, "a refused backend");
            return false;
        }
        backend.watchSize(sizeListener);
        for (Counted c : out) {
            backend.submit(c);
        }
        backend.unplug();
        LOG.log(Level.INFO, "disk " + disk + ": " + kind + " backend back, " + out.size() + " held requests sent");
        return true;
    }

    /** Closes {@code b}; a failure is only logged, as closing {@code what} (e.g. "a refused backend"). */
    private void closeQuietly(AsyncBlockBackend b, String what) {
        try {
            b.close();
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "disk " + disk + ": closing " + what + ": " + e);
        }
    }

    /**
     * The disk goes (detached, or quiesced by a core bundle's swap) while its backend is away: the held requests
     * fail now, so the device's reset does not wait for them in vain. Returns how many.
     */
    int failHeld() {
        List<BackendIo> left;
        synchronized (lock) {
            failing = true; // and those arriving until the device stopped
            left = new ArrayList<>(held);
            held.clear();
        }
        for (BackendIo io : left) {
            io.complete(new IOException("disk " + disk + ": its " + kind + " backend's bundle is stopped"));
        }
        return left.size();
    }

    /** Closes the backend; held requests fail (the device closes a disk only after its requests completed). */
    @Override
    public void close() throws IOException {
        AsyncBlockBackend b;
        List<BackendIo> left;
        synchronized (lock) {
            closed = true;
            b = current;
            current = null;
            left = new ArrayList<>(held);
            held.clear();
        }
        for (BackendIo io : left) {
            io.complete(new IOException("disk " + disk + ": closed while its backend was away"));
        }
        if (b != null) {
            b.close();
        }
    }

    @Override
    public String kind() {
        return kind;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public boolean readOnly() {
        return readOnly;
    }

    @Override
    public boolean supportsDiscard() {
        return discard;
    }

    @Override
    public boolean supportsWriteZeroes() {
        return writeZeroes;
    }

    @Override
    public boolean supportsFua() {
        return fua;
    }

    @Override
    public void resize(long newSize) throws IOException {
        AsyncBlockBackend b;
        synchronized (lock) {
            b = current;
        }
        if (b == null) {
            throw new IOException("disk " + disk + ": its " + kind + " backend is away (its bundle is stopped)");
        }
        b.resize(newSize);
        size = b.size();
    }

    /** Watches the backend now and every backend that takes over after a suspension. */
    @Override
    public void watchSize(LongConsumer listener) {
        AsyncBlockBackend b;
        synchronized (lock) {
            sizeListener = listener;
            b = current;
        }
        if (b != null) {
            b.watchSize(listener);
        }
    }

    /** A request as the backend sees it: its completion is counted, then the counter is reused. */
    private final class Counted implements BackendIo {

        private BackendIo io;

        @Override
        public Op op() {
            return io.op();
        }

        @Override
        public long offset() {
            return io.offset();
        }

        @Override
        public long length() {
            return io.length();
        }

        @Override
        public ByteBuffer[] buffers() {
            return io.buffers();
        }

        @Override
        public boolean fua() {
            return io.fua();
        }

        @Override
        public boolean mayUnmap() {
            return io.mayUnmap();
        }

        @Override
        public void complete(IOException error) {
            BackendIo target = io;
            io = null;
            target.complete(error);
            synchronized (lock) {
                if (free.size() < 1024) {
                    free.add(this);
                }
                if (--inFlight == 0) {
                    lock.notifyAll();
                }
            }
        }
    }
}
