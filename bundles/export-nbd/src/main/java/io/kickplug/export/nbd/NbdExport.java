package io.kickplug.export.nbd;

import io.kickplug.api.blk.DiskPort;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * One export: a name clients ask for, over a disk's {@link DiskPort}, read-only unless made writable. Counts its
 * connections and requests. Thread-safe.
 */
public final class NbdExport {

    private final String name;
    private final String disk;
    private final boolean writable;
    private final DiskPort port;
    private volatile boolean closed;
    final AtomicInteger connections = new AtomicInteger();
    final LongAdder requests = new LongAdder();
    final LongAdder errors = new LongAdder();
    final LongAdder bytesRead = new LongAdder();
    final LongAdder bytesWritten = new LongAdder();

    /** What {@code kp:nbd-list} shows of an export. */
    public record Status(String name, String disk, boolean writable, long sizeBytes, int flags, int connections,
            long requests, long errors, long bytesRead, long bytesWritten) {
    }

    NbdExport(String name, String disk, boolean writable, DiskPort port) {
        this.name = name;
        this.disk = disk;
        this.writable = writable;
        this.port = port;
    }

    public String name() {
        return name;
    }

    public String disk() {
        return disk;
    }

    public boolean writable() {
        return writable;
    }

    DiskPort port() {
        return port;
    }

    /** Read-only: not made writable, or the disk itself is read-only. */
    boolean readOnly() {
        return !writable || port.readOnly();
    }

    boolean closed() {
        return closed;
    }

    void markClosed() {
        closed = true;
    }

    /**
     * The transmission flags ("Transmission flags"): HAS_FLAGS, SEND_FLUSH and SEND_FUA always (the port makes a FUA
     * write durable, with a flush where the backend has no FUA); READ_ONLY, or SEND_TRIM and SEND_WRITE_ZEROES where
     * the backend can; CAN_MULTI_CONN when the server takes more than one connection.
     *
     * <p>Why CAN_MULTI_CONN is safe ("Transmission flags": "the server operates entirely without cache, or the cache
     * it uses is shared among all connections ... the effects of NBD_CMD_FLUSH and NBD_CMD_FLAG_FUA MUST be visible
     * across all connections when the server sends its reply"): every connection to this export submits to the same
     * {@link DiskPort}, so to one backend object of the disk; the server keeps no data of its own (a reply to a write
     * is sent only after the backend completed it, and reads always go to the backend); the filters on the way
     * (throttle) only delay requests before the backend, never answer them. A flush runs the backend's flush, which
     * makes every write completed through that backend durable, from whichever connection (and the disk's guest);
     * in the disk's tracked list it also waits for every write accepted before it. A FUA write completes only after
     * the backend made it durable. So a reply on one connection is visible to a read on any other.
     *
     * @param multiConn whether the server takes more than one connection (QEMU leaves the flag out with
     *     max-connections 1)
     */
    int transmissionFlags(boolean multiConn) {
        int flags = Nbd.FLAG_HAS_FLAGS | Nbd.FLAG_SEND_FLUSH | Nbd.FLAG_SEND_FUA;
        if (readOnly()) {
            flags |= Nbd.FLAG_READ_ONLY;
        } else {
            if (port.supportsDiscard()) {
                flags |= Nbd.FLAG_SEND_TRIM;
            }
            if (port.supportsWriteZeroes()) {
                flags |= Nbd.FLAG_SEND_WRITE_ZEROES;
            }
        }
        if (multiConn) {
            flags |= Nbd.FLAG_CAN_MULTI_CONN;
        }
        return flags;
    }

    Status status(boolean multiConn) {
        long size;
        try {
            size = port.size();
        } catch (RuntimeException goingAway) {
            size = 0;
        }
        return new Status(name, disk, writable, size, transmissionFlags(multiConn), connections.get(),
                requests.sum(), errors.sum(), bytesRead.sum(), bytesWritten.sum());
    }
}
