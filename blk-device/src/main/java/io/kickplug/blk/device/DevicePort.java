package io.kickplug.blk.device;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskPort;
import io.kickplug.api.blk.FixedBackendIo;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.blk.tracked.TrackedRequests;
import io.kickplug.blk.tracked.TrackedRequests.Access;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A {@link DiskPort} of a device: requests from a server that is not a virtio transport (the NBD export) go through
 * the device's tracked-requests list, then to the device's view of its backend (its filters and, for a blocking
 * backend, its worker pool), as the guest's requests do ({@link QueueWorker}).
 *
 * <p>Threads: a request registers on the caller's thread without blocking on the yielding lock (it queues and goes
 * on on the port's own thread); one that waits for an earlier request goes on on the port's thread too, never on the
 * thread that ended the earlier one (a disk's I/O thread: a backend that completes inline would then end the port's
 * request there). The caller's {@link BackendIo#complete} runs on the thread that ended the backend work, or on the
 * port's thread.
 *
 * <p>Every check of a request is made here again, whatever the caller checked: offset and length against the size
 * now (a resize may have shrunk the disk), buffer lengths, read-only, operations the backend lacks.
 */
public final class DevicePort implements DiskPort {

    private static final Logger LOG = System.getLogger(DevicePort.class.getName());
    /** How long {@link #close} waits for the requests in flight. */
    static final long CLOSE_TIMEOUT_MS = 30_000;

    private final String disk;
    private final BlockBackend backend;
    private final AsyncBlockBackend async;
    private final TrackedRequests tracked;
    private final boolean readOnly;
    private final Runnable detached;
    private final Consumer<DevicePort> onClose;
    /** Where requests go on after waiting for a lock or an earlier request. */
    private final ExecutorService thread;
    private final Object lock = new Object();
    /** Requests accepted and not completed; under {@link #lock}. */
    private int inFlight;
    private boolean closed;

    /**
     * @param async the device's view of its backend (filters, worker pool)
     * @param detached run once when the device's owner closes the port ({@link #detach})
     * @param onClose told once when the port closes, either way
     */
    DevicePort(String disk, BlockBackend backend, AsyncBlockBackend async, TrackedRequests tracked, boolean readOnly,
            Runnable detached, Consumer<DevicePort> onClose) {
        this.disk = disk;
        this.backend = backend;
        this.async = async;
        this.tracked = tracked;
        this.readOnly = readOnly;
        this.detached = detached;
        this.onClose = onClose;
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "kickplug-port-" + disk);
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public String disk() {
        return disk;
    }

    @Override
    public long size() {
        return backend.size();
    }

    @Override
    public int logicalBlockSize() {
        return VirtioBlk.SECTOR_SIZE;
    }

    @Override
    public boolean readOnly() {
        return readOnly;
    }

    @Override
    public boolean supportsDiscard() {
        return !readOnly && backend.supportsDiscard();
    }

    @Override
    public boolean supportsWriteZeroes() {
        return !readOnly && backend.supportsWriteZeroes();
    }

    /** Requests accepted and not completed yet. */
    public int inFlight() {
        synchronized (lock) {
            return inFlight;
        }
    }

    @Override
    public void submit(BackendIo io) {
        String refused = check(io);
        if (refused != null) {
            io.complete(new IOException("disk " + disk + ": " + refused));
            return;
        }
        synchronized (lock) {
            if (closed) {
                refused = "the port is closed (the disk was detached or its export stopped)";
            } else {
                inFlight++;
            }
        }
        if (refused != null) {
            io.complete(new IOException("disk " + disk + ": " + refused));
            return;
        }
        new PortRequest(io).begin();
    }

    /** Why {@code io} cannot run, or null. */
    private String check(BackendIo io) {
        BackendIo.Op op = io.op();
        if (op == null) {
            return "no operation";
        }
        long offset = io.offset();
        long length = io.length();
        if (op == BackendIo.Op.FLUSH) {
            return null;
        }
        if (offset < 0 || length < 0 || offset > Long.MAX_VALUE - length || offset + length > backend.size()) {
            return op + " of " + length + " bytes at " + offset + " is outside the disk's " + backend.size()
                    + " bytes";
        }
        if (op == BackendIo.Op.READ || op == BackendIo.Op.WRITE) {
            ByteBuffer[] buffers = io.buffers();
            if (buffers == null || FixedBackendIo.remaining(buffers) != length) {
                return op + ": the buffers do not hold " + length + " bytes";
            }
            if (op == BackendIo.Op.READ) {
                for (ByteBuffer b : buffers) {
                    if (b.isReadOnly()) {
                        return "READ into a read-only buffer";
                    }
                }
            }
        }
        if (op != BackendIo.Op.READ && readOnly) {
            return op + " refused: the disk is read-only";
        }
        if (op == BackendIo.Op.DISCARD && !backend.supportsDiscard()) {
            return "the " + backend.kind() + " backend cannot discard";
        }
        if (op == BackendIo.Op.WRITE_ZEROES && !backend.supportsWriteZeroes()) {
            return "the " + backend.kind() + " backend cannot write zeroes";
        }
        return null;
    }

    @Override
    public void unplug() {
        async.unplug();
    }

    @Override
    public void close() {
        closeNow(false);
    }

    /** The device's owner closes the port (detach): as {@link #close}, then the {@code detached} action. */
    public void detach() {
        if (closeNow(true)) {
            try {
                detached.run();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "disk " + disk + ": the detach action of a port failed: " + e);
            }
        }
    }

    /**
     * Refuses new requests and waits for those in flight, also when another thread closed it first (a detach must
     * not go on while the requests of a close under way still run); true for the call that closed it.
     */
    private boolean closeNow(boolean byOwner) {
        boolean first;
        synchronized (lock) {
            first = !closed;
            closed = true;
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_TIMEOUT_MS);
            boolean interrupted = false;
            while (inFlight > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.log(Level.ERROR, "disk " + disk + ": " + inFlight + " port requests still in flight after "
                            + CLOSE_TIMEOUT_MS + " ms; the port closes without them");
                    break;
                }
                try {
                    lock.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (!first) {
            return false;
        }
        thread.shutdown();
        onClose.accept(this);
        LOG.log(Level.DEBUG, () -> "disk " + disk + ": port closed" + (byOwner ? " (detached)" : ""));
        return true;
    }

    private void completed() {
        synchronized (lock) {
            if (--inFlight == 0) {
                lock.notifyAll();
            }
        }
    }

    /** Runs {@code r} on the port's thread; once the port's thread is gone (closed), here. */
    private void onPortThread(Runnable r) {
        try {
            thread.execute(r);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            r.run();
        }
    }

    /**
     * One request between acceptance and completion: its tracked entry, then its backend operation (the caller's,
     * seen through this object so that its completion comes here), then, for a FUA operation on a backend without
     * FUA, a flush; then the tracked entry's end and the caller's completion.
     */
    private final class PortRequest implements BackendIo {
        private static final ByteBuffer[] NONE = new ByteBuffer[0];
        private final BackendIo io;
        private final TrackedRequests.Request entry;
        /** Whether the backend makes the operation durable itself; fixed at start. */
        private boolean fuaInBackend;
        /** False for the operation, true for the flush after it; written before each submit. */
        private volatile boolean flushing;
        private IOException error;

        PortRequest(BackendIo io) {
            this.io = io;
            this.entry = tracked.newRequest(() -> onPortThread(this::start), DevicePort.this::onPortThread,
                    this::begun, this::ended);
        }

        void begin() {
            long sector = io.offset() / VirtioBlk.SECTOR_SIZE;
            // Checked by submit: offset + length <= size, no overflow.
            long end = io.op() == Op.FLUSH ? sector
                    : (io.offset() + io.length() + VirtioBlk.SECTOR_SIZE - 1) / VirtioBlk.SECTOR_SIZE;
            if (tracked.beginOrDefer(entry, access(io.op()), sector, end, 0)) {
                begun();
            } // else it waits for the yielding lock, and begun() runs on the port's thread
        }

        private void begun() {
            if (entry.arm()) {
                start();
            } // else start() runs on the port's thread once the requests it waits for have ended
        }

        private void start() {
            fuaInBackend = async.supportsFua();
            flushing = false;
            submitSelf();
        }

        private void submitSelf() {
            try {
                async.submit(this);
            } catch (RuntimeException e) {
                finish(new IOException("the " + backend.kind() + " backend refused the operation: " + e, e));
                return;
            }
            async.unplug();
        }

        @Override
        public Op op() {
            return flushing ? Op.FLUSH : io.op();
        }

        @Override
        public long offset() {
            return flushing ? 0 : io.offset();
        }

        @Override
        public long length() {
            return flushing ? 0 : io.length();
        }

        @Override
        public ByteBuffer[] buffers() {
            return flushing ? NONE : io.buffers();
        }

        @Override
        public boolean fua() {
            return !flushing && io.fua() && fuaInBackend;
        }

        @Override
        public boolean mayUnmap() {
            return !flushing && io.mayUnmap();
        }

        /** The backend ended the operation or the flush after it. Any thread. */
        @Override
        public void complete(IOException e) {
            if (e == null && !flushing && io.fua() && !fuaInBackend && io.op() != Op.READ && io.op() != Op.FLUSH) {
                flushing = true; // the operation is done; its data is durable once this flush is
                submitSelf();
                return;
            }
            finish(e);
        }

        /** The backend work is over: the tracked entry ends, then the caller hears. Any thread. */
        private void finish(IOException e) {
            error = e;
            if (entry.endOrDefer()) {
                ended();
            } // else ended() runs on the port's thread once the entry has ended
        }

        private void ended() {
            try {
                io.complete(error);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "disk " + disk + ": a port request's completion failed: " + e);
            } finally {
                completed();
            }
        }
    }

    static Access access(BackendIo.Op op) {
        return switch (op) {
            case READ -> Access.READ;
            case WRITE -> Access.WRITE;
            case FLUSH -> Access.FLUSH;
            // As the guest's: QEMU makes write-zeroes and discard serialising.
            case DISCARD, WRITE_ZEROES -> Access.SERIALISING;
        };
    }
}
