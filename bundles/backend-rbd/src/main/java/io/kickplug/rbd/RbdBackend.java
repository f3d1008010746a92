package io.kickplug.rbd;

import com.sun.jna.CallbackThreadInitializer;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.RbdImage;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * A disk on a Ceph RBD image, through librbd's asynchronous C API: every operation is an {@code rbd_aio_*} call
 * with a completion whose callback (on a librbd thread) completes the {@link BackendIo}; the device hands that to
 * the queue's I/O thread. Nothing here blocks on I/O.
 *
 * <ul>
 * <li><b>Buffers.</b> A direct buffer (the guest's memory) goes to librbd by its address, without a copy: one buffer
 * with {@code rbd_aio_read}/{@code rbd_aio_write}, several with {@code rbd_aio_readv}/{@code rbd_aio_writev} over an
 * iovec array. A heap buffer goes through a native bounce buffer.</li>
 * <li><b>Operations.</b> READ, WRITE, FLUSH ({@code rbd_aio_flush}), DISCARD ({@code rbd_aio_discard}) and
 * WRITE_ZEROES ({@code rbd_aio_write_zeroes}, thick unless the device allows unmapping) where librbd has it.</li>
 * <li><b>Errors.</b> A negative return (at submission or in the completion) fails the operation with an
 * {@link IOException} naming the image, the call and the errno; the device answers VIRTIO_BLK_S_IOERR and logs
 * it. librbd itself waits for OSDs that restart, so they cost time, not errors.</li>
 * <li><b>Resizes.</b> {@link #resize} is {@code rbd_resize}. librbd's update watch ({@link #watchSize}) finds a
 * resize by another client ({@code rbd resize}); the disk then takes the new size as {@code kp:resize} would, and
 * the guest is told.</li>
 * <li><b>Sharing.</b> The cluster connection comes from the factory's {@link RbdCluster.Registry}; librbd's
 * exclusive lock (on by default for new images) passes between clients that write, so two daemons can serve the
 * image in turn.</li>
 * </ul>
 */
final class RbdBackend implements AsyncBlockBackend {

    private static final Logger LOG = System.getLogger(RbdBackend.class.getName());
    /** How long a close waits for the operations in flight. */
    private static final long CLOSE_WAIT_MS = 30_000;
    private static final ByteBuffer[] NO_BUFFERS = new ByteBuffer[0];

    private final RbdImage name;
    private final RbdCluster.Registry registry;
    private final RbdCluster cluster;
    private final Pointer ioctx;
    private final Pointer image;
    private final boolean readOnly;
    private volatile long size;
    /** The image's size as librbd last answered it (the watch re-reads it); {@link #size} follows by resize. */
    private volatile long imageSize;
    private volatile boolean closed;
    /** Held around librbd calls of the watch's thread and around the close, so none runs on a closed image. */
    private final Object imageLock = new Object();
    /** The disk's listener ({@link #watchSize}), or null. */
    private volatile LongConsumer sizeListener;
    /** Whether librbd's update watch is registered, and its handle. Under imageLock. */
    private boolean watching;
    private long watchHandle;
    /** Re-reads the size after librbd's update callback, off librbd's thread; made by the first watch. */
    private volatile ExecutorService watchThread;
    /** An update callback came and its size check has not started yet (coalesces bursts of header updates). */
    private final AtomicBoolean checkPending = new AtomicBoolean();
    /** Held for as long as librbd may call it. */
    private final Librbd.UpdateCallback updateCallback = arg -> updated();
    private final AtomicLong ids = new AtomicLong();
    private final ConcurrentHashMap<Long, Op> inFlight = new ConcurrentHashMap<>();
    /** Held for as long as librbd may call it. */
    private final Librbd.CompletionCallback callback = this::completed;

    /** One operation in librbd: what completes it and the native memory it needs until then. */
    private record Op(BackendIo io, Memory bounce, Memory iov) {

        /** "write of 4096 bytes at 0", for the error (built only on failure: nothing per request). */
        String what() {
            String op = io.op().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
            return io.op() == BackendIo.Op.FLUSH ? op : op + " of " + io.length() + " bytes at " + io.offset();
        }
    }

    private RbdBackend(RbdImage name, RbdCluster.Registry registry, RbdCluster cluster, Pointer ioctx, Pointer image,
            boolean readOnly, long size) {
        this.name = name;
        this.registry = registry;
        this.cluster = cluster;
        this.ioctx = ioctx;
        this.image = image;
        this.readOnly = readOnly;
        this.size = size;
        this.imageSize = size;
        // librbd's callback threads stay attached to the JVM (a daemon thread each), instead of attaching per call.
        Native.setCallbackThreadInitializer(callback, new CallbackThreadInitializer(true, false, "kickplug-rbd-cb"));
        Native.setCallbackThreadInitializer(updateCallback, new CallbackThreadInitializer(true, false,
                "kickplug-rbd-update"));
    }

    /**
     * Opens {@code name} on a connection of {@code registry}; read-only when asked or when a snapshot is named.
     *
     * @throws IOException naming the image and the errno when the cluster, pool or image cannot be opened
     */
    static RbdBackend open(RbdImage name, boolean readOnly, RbdCluster.Registry registry) throws IOException {
        RbdCluster cluster = registry.acquire(name);
        Pointer ioctx = null;
        try {
            PointerByReference ref = new PointerByReference();
            RbdCluster.check(Librbd.Rados.rados_ioctx_create(cluster.handle, name.pool(), ref),
                    "opening pool '" + name.pool() + "'");
            ioctx = ref.getValue();
            if (name.namespace() != null) {
                Librbd.Rados.rados_ioctx_set_namespace(ioctx, name.namespace());
            }
            boolean ro = readOnly || name.snapshot() != null;
            PointerByReference img = new PointerByReference();
            int r = ro ? Librbd.rbd_open_read_only(ioctx, name.image(), img, name.snapshot())
                    : Librbd.rbd_open(ioctx, name.image(), img, name.snapshot());
            RbdCluster.check(r, "opening rbd image " + name.displayName());
            Pointer image = img.getValue();
            LongByReference bytes = new LongByReference();
            r = Librbd.rbd_get_size(image, bytes);
            if (r < 0) {
                Librbd.rbd_close(image);
                RbdCluster.check(r, "the size of rbd image " + name.displayName());
            }
            return new RbdBackend(name, registry, cluster, ioctx, image, ro, bytes.getValue());
        } catch (IOException | RuntimeException e) {
            if (ioctx != null) {
                Librbd.Rados.rados_ioctx_destroy(ioctx);
            }
            registry.release(cluster);
            throw e;
        }
    }

    @Override
    public String kind() {
        return RbdImage.KIND;
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
        return !readOnly;
    }

    @Override
    public boolean supportsWriteZeroes() {
        return !readOnly && Librbd.WriteZeroes.available();
    }

    /** The image as the rbd CLI names it. */
    RbdImage image() {
        return name;
    }

    /** Operations librbd has not completed yet. */
    int inFlight() {
        return inFlight.size();
    }

    @Override
    public void submit(BackendIo io) {
        if (closed) {
            io.complete(new IOException("rbd image " + name.displayName() + " is closed"));
            return;
        }
        PointerByReference ref = new PointerByReference();
        long id = ids.incrementAndGet();
        int r = Librbd.rbd_aio_create_completion(new Pointer(id), callback, ref);
        if (r < 0) {
            io.complete(new IOException("rbd " + name.displayName() + ": rbd_aio_create_completion failed: errno "
                    + Errno.describe(r)));
            return;
        }
        Pointer c = ref.getValue();
        try {
            start(io, id, c);
        } catch (RuntimeException e) {
            if (inFlight.remove(id) != null) {
                Librbd.rbd_aio_release(c);
            }
            io.complete(new IOException("rbd " + name.displayName() + ": " + e, e));
        }
    }

    /** Registers and starts the operation; when librbd refuses it at once, completes it here. */
    private void start(BackendIo io, long id, Pointer c) {
        ByteBuffer[] buffers = io.buffers() == null ? NO_BUFFERS : io.buffers();
        long offset = io.offset();
        Op op;
        int r;
        switch (io.op()) {
            case READ, WRITE -> {
                boolean write = io.op() == BackendIo.Op.WRITE;
                long length = io.length();
                Memory bounce = null;
                Memory iov = null;
                long address;
                int count = 0;
                if (buffers.length == 1 && buffers[0].isDirect()) {
                    address = address(buffers[0]);
                } else if (allDirect(buffers)) {
                    iov = new Memory(16L * buffers.length);
                    for (ByteBuffer b : buffers) {
                        if (b.remaining() == 0) {
                            continue;
                        }
                        iov.setLong(16L * count, address(b));
                        iov.setLong(16L * count + 8, b.remaining());
                        count++;
                    }
                    address = Pointer.nativeValue(iov);
                } else {
                    bounce = new Memory(Math.max(1, length));
                    address = Pointer.nativeValue(bounce);
                    if (write) {
                        long at = 0;
                        for (ByteBuffer b : buffers) {
                            ByteBuffer d = b.duplicate();
                            int n = d.remaining();
                            bounce.getByteBuffer(at, n).put(d);
                            at += n;
                        }
                    }
                }
                op = new Op(io, bounce, iov);
                inFlight.put(id, op);
                if (iov != null) {
                    r = write ? Librbd.rbd_aio_writev(image, address, count, offset, c)
                            : Librbd.rbd_aio_readv(image, address, count, offset, c);
                } else {
                    r = write ? Librbd.rbd_aio_write(image, offset, length, address, c)
                            : Librbd.rbd_aio_read(image, offset, length, address, c);
                }
            }
            case FLUSH -> {
                op = new Op(io, null, null);
                inFlight.put(id, op);
                r = Librbd.rbd_aio_flush(image, c);
            }
            case DISCARD -> {
                op = new Op(io, null, null);
                inFlight.put(id, op);
                r = Librbd.rbd_aio_discard(image, offset, io.length(), c);
            }
            case WRITE_ZEROES -> {
                op = new Op(io, null, null);
                inFlight.put(id, op);
                r = Librbd.WriteZeroes.rbd_aio_write_zeroes(image, offset, io.length(), c,
                        io.mayUnmap() ? 0 : Librbd.WriteZeroes.THICK_PROVISION, 0);
            }
            default -> throw new IllegalStateException("unknown operation " + io.op());
        }
        if (r < 0) {
            inFlight.remove(id);
            Librbd.rbd_aio_release(c);
            io.complete(failure(op.what(), r));
            drained();
        }
    }

    /** After an operation left {@link #inFlight}: wakes a close waiting for the last one. */
    private void drained() {
        if (closed && inFlight.isEmpty()) {
            synchronized (inFlight) {
                inFlight.notifyAll();
            }
        }
    }

    /** librbd's completion callback, on a librbd thread. */
    private void completed(Pointer c, Pointer arg) {
        long ret = Librbd.rbd_aio_get_return_value(c);
        Librbd.rbd_aio_release(c);
        Op op = inFlight.remove(Pointer.nativeValue(arg));
        if (op == null) {
            return;
        }
        try {
            finish(op, ret);
        } finally {
            drained();
        }
    }

    private void finish(Op op, long ret) {
        if (ret < 0) {
            op.io().complete(failure(op.what(), ret));
            return;
        }
        if (op.bounce() != null && op.io().op() == BackendIo.Op.READ) {
            long at = 0;
            for (ByteBuffer b : op.io().buffers()) {
                ByteBuffer d = b.duplicate();
                int n = d.remaining();
                d.put(op.bounce().getByteBuffer(at, n));
                at += n;
            }
        }
        op.io().complete(null);
    }

    private IOException failure(String what, long ret) {
        return new IOException("rbd " + name.displayName() + ": " + what + " failed: errno " + Errno.describe(ret));
    }

    private static boolean allDirect(ByteBuffer[] buffers) {
        for (ByteBuffer b : buffers) {
            if (!b.isDirect()) {
                return false;
            }
        }
        return true;
    }

    /** The native address of a direct buffer's position. */
    private static long address(ByteBuffer b) {
        return Pointer.nativeValue(Native.getDirectBufferPointer(b)) + b.position();
    }

    /**
     * Resizes the image ({@code rbd_resize}); to the size the watch found the image at already (another client
     * resized it, {@link #watchSize}), only takes note, also when read-only.
     */
    @Override
    public void resize(long newSize) throws IOException {
        if (newSize == imageSize) {
            size = newSize;
            return;
        }
        if (readOnly) {
            throw new IOException("rbd image " + name.displayName() + " is open read-only");
        }
        RbdCluster.check(Librbd.rbd_resize(image, newSize), "resizing rbd image " + name.displayName() + " to "
                + newSize + " bytes");
        imageSize = newSize;
        size = newSize;
    }

    /**
     * Watches the image's header (librbd's {@code rbd_update_watch}): after each update (another client's
     * {@code rbd resize} among them) a thread of this backend re-reads the size ({@code rbd_get_size}) and, when it
     * differs from the disk's, tells {@code listener}. A snapshot never changes size and is not watched. The first
     * check runs at once, so a resize between the open and this call is not missed.
     */
    @Override
    public void watchSize(LongConsumer listener) {
        sizeListener = listener;
        if (listener == null || name.snapshot() != null) {
            return;
        }
        synchronized (imageLock) {
            if (closed || watchThread != null) {
                return;
            }
            watchThread = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "kickplug-rbd-watch-" + name.image());
                t.setDaemon(true);
                return t;
            });
            LongByReference handle = new LongByReference();
            int r = Librbd.rbd_update_watch(image, handle, updateCallback, null);
            if (r < 0) {
                LOG.log(Level.WARNING, "rbd " + name.displayName() + ": rbd_update_watch failed: errno "
                        + Errno.describe(r) + "; a resize by another client reaches the guest only by kp:resize");
            } else {
                watching = true;
                watchHandle = handle.getValue();
            }
        }
        updated();
    }

    /** librbd's update callback (on a librbd thread; it must not block): the size check runs on the watch thread. */
    private void updated() {
        ExecutorService t = watchThread;
        if (t == null || !checkPending.compareAndSet(false, true)) {
            return;
        }
        try {
            t.execute(this::checkSize);
        } catch (RejectedExecutionException e) {
            checkPending.set(false); // closed meanwhile
        }
    }

    private void checkSize() {
        checkPending.set(false);
        long now;
        synchronized (imageLock) {
            if (closed) {
                return;
            }
            LongByReference bytes = new LongByReference();
            int r = Librbd.rbd_get_size(image, bytes);
            if (r < 0) {
                LOG.log(Level.WARNING, "rbd " + name.displayName() + ": rbd_get_size after an update failed: errno "
                        + Errno.describe(r));
                return;
            }
            now = bytes.getValue();
        }
        LongConsumer listener = sizeListener;
        if (now != imageSize) {
            LOG.log(Level.INFO, "rbd " + name.displayName() + ": the image was resized from " + imageSize + " to "
                    + now + " bytes");
            imageSize = now;
        }
        if (listener != null && now != size) {
            // Not under imageLock: the disk's resize comes back to this backend (resize) from this thread.
            listener.accept(now);
        }
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        long deadline = System.nanoTime() + CLOSE_WAIT_MS * 1_000_000;
        // rbd_close waits for librbd's own operations too; this waits for the callbacks that complete ours.
        synchronized (inFlight) {
            long left;
            while (!inFlight.isEmpty() && (left = deadline - System.nanoTime()) > 0) {
                try {
                    inFlight.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        if (!inFlight.isEmpty()) {
            LOG.log(Level.WARNING, "rbd " + name.displayName() + ": closing with " + inFlight.size()
                    + " operations still in librbd after " + CLOSE_WAIT_MS + " ms");
        }
        int r;
        synchronized (imageLock) {
            // rbd_update_unwatch waits for a callback in progress, which never blocks (updated()).
            if (watching) {
                int u = Librbd.rbd_update_unwatch(image, watchHandle);
                if (u < 0) {
                    LOG.log(Level.WARNING, "rbd " + name.displayName() + ": rbd_update_unwatch failed: errno "
                            + Errno.describe(u));
                }
                watching = false;
            }
            if (watchThread != null) {
                watchThread.shutdown(); // not awaited: its check may be waiting for the disk, which is closing this
            }
            r = Librbd.rbd_close(image);
        }
        Librbd.Rados.rados_ioctx_destroy(ioctx);
        registry.release(cluster);
        if (r < 0) {
            LOG.log(Level.WARNING, "rbd " + name.displayName() + ": rbd_close failed: errno " + Errno.describe(r));
        }
    }
}
