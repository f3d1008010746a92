package io.kickplug.export.nbd;

import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.DiskPort;
import io.kickplug.api.blk.FixedBackendIo;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One client connection: the negotiation ({@link Negotiation}), then the transmission phase (proto.md
 * "Transmission"): requests are read, checked ({@link RequestCheck}) and submitted to the export's {@link DiskPort}
 * as they come, many in flight; replies go out in the order the requests complete ("Replies need not be sent in the
 * same order as requests").
 *
 * <p>Threads: the connection's reader reads and submits. A request the port completes on the reader itself (memory
 * and null disks) has its reply written by the reader, in one gathering write per batch of requests read, before it
 * blocks again. A request completed on another thread (a worker of a file disk, a throttle's timer, the disk's port
 * thread) only queues its reply, for the connection's writer thread: a completion never blocks on this client's
 * socket, so a client that does not read its replies stalls only its own two threads.
 *
 * <p>Bounds: at most {@value #MAX_IN_FLIGHT} requests and {@value #MAX_IN_FLIGHT_BYTES} bytes of request data per
 * connection; the reader waits for replies to be sent before it reads more. A WRITE's payload buffer is taken only
 * after its header passed every check, so no client length is ever allocated unchecked.
 *
 * <p>The end: on NBD_CMD_DISC, end of input, a protocol violation or a server shutdown the reader stops reading,
 * waits until every request it submitted has completed (the port completes each exactly once) and its reply is sent
 * (or dropped, when the client is gone), then the socket closes. A request whose payload did not arrive in full is
 * never submitted.
 */
final class Connection implements Runnable {

    private static final Logger LOG = System.getLogger(Connection.class.getName());

    static final int MAX_IN_FLIGHT = 128;
    static final int MAX_IN_FLIGHT_BYTES = 40 << 20;
    /** Bytes per permit of {@link #bytePermits}. */
    private static final int PERMIT_BYTES = 4096;
    private static final int INPUT_BYTES = 64 * 1024;
    /** How long the end of a connection waits for its requests in flight (the port's own close waits 30 s). */
    private static final long DRAIN_TIMEOUT_MS = 60_000;
    private static final ByteBuffer[] NO_BUFFERS = new ByteBuffer[0];

    private final ByteChannel channel;
    private final Exports exports;
    private final boolean multiConn;
    private final String peer;
    private final BufferPool pool;
    private final Runnable onEnd;
    private final Semaphore requestPermits = new Semaphore(MAX_IN_FLIGHT);
    private final Semaphore bytePermits = new Semaphore(MAX_IN_FLIGHT_BYTES / PERMIT_BYTES);
    /** Replies of requests completed on other threads, for the writer. */
    private final LinkedBlockingQueue<Reply> queued = new LinkedBlockingQueue<>();
    /** Replies of requests completed on the reader, written by the reader; reader only. */
    private final List<Reply> local = new ArrayList<>();
    /** Whole replies are written under it, by the reader or the writer. */
    private final ReentrantLock writeLock = new ReentrantLock();
    private volatile Thread reader;
    private Thread writer;
    /** Writing failed (the client is gone): replies are dropped, their requests still released. */
    private volatile boolean broken;
    private volatile NbdExport export;
    private final java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);
    private boolean structured;

    /** A reply to send, and what to give back once it is out. */
    private static final class Reply {
        final ByteBuffer[] parts;
        final Pending request;

        Reply(ByteBuffer[] parts, Pending request) {
            this.parts = parts;
            this.request = request;
        }
    }

    /** The writer's signal to stop once the queue is empty. */
    private static final Reply STOP = new Reply(NO_BUFFERS, null);

    Connection(ByteChannel channel, Exports exports, boolean multiConn, String peer, BufferPool pool, Runnable onEnd) {
        this.channel = channel;
        this.exports = exports;
        this.multiConn = multiConn;
        this.peer = peer;
        this.pool = pool;
        this.onEnd = onEnd;
    }

    String peer() {
        return peer;
    }

    /** The export in transmission, or null during the negotiation. */
    NbdExport export() {
        return export;
    }

    @Override
    public void run() {
        reader = Thread.currentThread();
        try {
            Negotiation.Session session = new Negotiation(channel, exports, multiConn, peer).run();
            if (session != null) {
                transmit(session);
            }
        } catch (IOException e) {
            LOG.log(Level.DEBUG, () -> peer + ": " + e);
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, peer + ": connection failed", e);
        } finally {
            closeChannel();
            onEnd.run();
            ended.countDown();
        }
    }

    /** Waits up to {@code nanos} for the connection to end; true when it has. */
    boolean awaitEnd(long nanos) {
        try {
            return ended.await(Math.max(0, nanos), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Stops reading (a server or export shutdown): what is in flight completes and is answered, then the connection
     * closes. From any thread.
     */
    void shutdown() {
        try {
            if (channel instanceof SocketChannel s && s.isOpen()) {
                s.shutdownInput();
                return;
            }
        } catch (IOException | RuntimeException e) {
            // fall through: close it
        }
        closeChannel();
    }

    private void closeChannel() {
        try {
            channel.close();
        } catch (IOException e) {
            // closed
        }
    }

    private void transmit(Negotiation.Session session) {
        NbdExport e = session.export();
        export = e;
        structured = session.structured();
        e.connections.incrementAndGet();
        writer = new Thread(this::writeLoop, reader.getName() + "-writer");
        writer.setDaemon(true);
        writer.start();
        try {
            readLoop(e, session.transmissionFlags());
        } catch (IOException ex) {
            LOG.log(Level.DEBUG, () -> peer + ": " + ex);
        } finally {
            drain();
            e.connections.decrementAndGet();
        }
    }

    private void readLoop(NbdExport e, int flags) throws IOException {
        DiskPort port = e.port();
        ByteBuffer in = ByteBuffer.allocateDirect(INPUT_BYTES);
        in.flip();
        while (true) {
            if (in.remaining() < Nbd.REQUEST_BYTES) {
                // About to block on the socket: start what the port holds, send what is ready.
                port.unplug();
                writeLocal();
                in.compact();
                int n = channel.read(in);
                in.flip();
                if (n < 0) {
                    return; // the client went away (a hard disconnect): the requests in flight still complete
                }
                continue;
            }
            Request r = Request.read(in);
            int verdict = RequestCheck.check(r, new RequestCheck.Limits(port.size(), e.readOnly(), flags, structured));
            if (verdict == RequestCheck.CLOSE) {
                LOG.log(Level.WARNING, peer + ": " + r + " breaks the protocol (magic 0x"
                        + Integer.toHexString(r.magic()) + "); connection closed");
                return;
            }
            if (r.type() == Nbd.CMD_DISC && verdict == 0) {
                return; // NBD_CMD_DISC: "handle all outstanding requests", then close; no reply
            }
            e.requests.increment();
            if (verdict != 0) {
                e.errors.increment();
                if (r.carriesPayload() && !skip(in, r.lengthBytes())) {
                    return;
                }
                acquire(1, 0);
                answer(new Pending(r, null, 0, e), verdict, "request refused: " + Nbd.errno(verdict) + " (" + r + ")",
                        false);
                continue;
            }
            if (!dispatch(r, in, port, e)) {
                return;
            }
        }
    }

    /** Submits a checked request; false when the client went away in the middle of a WRITE's payload. */
    private boolean dispatch(Request r, ByteBuffer in, DiskPort port, NbdExport e) throws IOException {
        int length = r.length(); // checked: at most MAX_PAYLOAD for data, aligned, inside the export
        boolean fua = (r.flags() & Nbd.CMD_FLAG_FUA) != 0;
        boolean data = r.type() == Nbd.CMD_READ || r.type() == Nbd.CMD_WRITE;
        int permits = data ? (int) ((r.lengthBytes() + PERMIT_BYTES - 1) / PERMIT_BYTES) : 0;
        acquire(1, permits);
        if (length == 0 && r.type() != Nbd.CMD_FLUSH) {
            // A length of 0: "the behavior of a server on such a request is unspecified although the server SHOULD NOT
            // disconnect". Nothing to do: success, without the backend.
            answer(new Pending(r, null, permits, e), 0, null, false);
            return true;
        }
        switch (r.type()) {
            case Nbd.CMD_READ -> {
                ByteBuffer b = pool.take(length);
                port.submit(new Pending(r, BackendIo.Op.READ, b, false, false, permits, e));
            }
            case Nbd.CMD_WRITE -> {
                ByteBuffer b = pool.take(length);
                if (!fill(in, b)) {
                    pool.give(b);
                    release(1, permits);
                    return false; // a partial write is never submitted
                }
                b.flip();
                port.submit(new Pending(r, BackendIo.Op.WRITE, b, fua, false, permits, e));
            }
            case Nbd.CMD_FLUSH -> port.submit(new Pending(r, BackendIo.Op.FLUSH, null, false, false, 0, e));
            case Nbd.CMD_TRIM -> port.submit(new Pending(r, BackendIo.Op.DISCARD, null, fua, true, 0, e));
            case Nbd.CMD_WRITE_ZEROES -> port.submit(new Pending(r, BackendIo.Op.WRITE_ZEROES, null, fua,
                    // NBD_CMD_FLAG_NO_HOLE: "the area MUST be fully provisioned"; without it the server MAY trim.
                    (r.flags() & Nbd.CMD_FLAG_NO_HOLE) == 0, 0, e));
            default -> throw new IllegalStateException("unchecked command " + r.type());
        }
        return true;
    }

    /**
     * Takes room for one more request and {@code bytes} permits of its data; when there is none, sends the reader's
     * own replies first (they free room), then waits for the writer's.
     */
    private void acquire(int requests, int bytes) throws IOException {
        if (requestPermits.tryAcquire(requests)) {
            if (bytes == 0 || bytePermits.tryAcquire(bytes)) {
                return;
            }
            requestPermits.release(requests);
        }
        writeLocal();
        try {
            requestPermits.acquire(requests);
            if (bytes > 0) {
                bytePermits.acquire(bytes);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException(peer + ": interrupted while waiting for room for a request");
        }
    }

    private void release(int requests, int bytes) {
        requestPermits.release(requests);
        if (bytes > 0) {
            bytePermits.release(bytes);
        }
    }

    /** Copies the payload into {@code b} from the input buffer, then from the socket; false at end of input. */
    private boolean fill(ByteBuffer in, ByteBuffer b) throws IOException {
        int n = Math.min(in.remaining(), b.remaining());
        if (n > 0) {
            ByteBuffer part = in.slice();
            part.limit(n);
            b.put(part);
            in.position(in.position() + n);
        }
        while (b.hasRemaining()) {
            if (channel.read(b) < 0) {
                return false;
            }
        }
        return true;
    }

    /** Reads and drops {@code length} payload bytes of a refused WRITE; false at end of input. */
    private boolean skip(ByteBuffer in, long length) throws IOException {
        long left = length;
        int n = (int) Math.min(in.remaining(), left);
        in.position(in.position() + n);
        left -= n;
        if (left == 0) {
            return true;
        }
        ByteBuffer scratch = ByteBuffer.allocate((int) Math.min(left, 64 * 1024));
        while (left > 0) {
            scratch.clear().limit((int) Math.min(left, scratch.capacity()));
            int got = channel.read(scratch);
            if (got < 0) {
                return false;
            }
            left -= got;
        }
        return true;
    }

    /**
     * A request between submission and reply: the port's operation, then the reply and the release of its buffer
     * and permits. Completed exactly once by the port, from any thread.
     */
    private final class Pending extends FixedBackendIo {
        final Request request;
        final ByteBuffer buffer;
        final int permits;
        final NbdExport export;

        Pending(Request request, BackendIo.Op op, ByteBuffer buffer, boolean fua, boolean mayUnmap, int permits,
                NbdExport export) {
            super(op, request.offset(), request.lengthBytes(), buffer == null ? NO_BUFFERS : new ByteBuffer[] {buffer},
                    fua, mayUnmap);
            this.request = request;
            this.buffer = buffer;
            this.permits = permits;
            this.export = export;
        }

        /** A request answered without the port. */
        Pending(Request request, ByteBuffer buffer, int permits, NbdExport export) {
            this(request, BackendIo.Op.FLUSH, buffer, false, false, permits, export);
        }

        @Override
        public void complete(IOException error) {
            int errno = 0;
            String message = null;
            if (error != null) {
                // The port was closed under the request (export stopped, disk detached): ESHUTDOWN ("Terminating the
                // transmission phase"); any other failure is the backend's: EIO.
                errno = export.closed() ? Nbd.ESHUTDOWN : Nbd.EIO;
                message = error.getMessage();
                export.errors.increment();
                LOG.log(Level.DEBUG, () -> peer + ": " + request + " failed: " + error.getMessage());
            } else if (request.type() == Nbd.CMD_READ) {
                export.bytesRead.add(request.lengthBytes());
            } else if (request.type() == Nbd.CMD_WRITE) {
                export.bytesWritten.add(request.lengthBytes());
            }
            answer(this, errno, message, error != null);
        }
    }

    /** Builds the reply of {@code p} and hands it to whoever writes it. */
    private void answer(Pending p, int errno, String message, boolean backendError) {
        Reply reply = new Reply(Replies.of(p.request, structured, errno, message, backendError, p.buffer), p);
        if (Thread.currentThread() == reader) {
            local.add(reply);
        } else {
            queued.add(reply);
        }
    }

    /** Writes the replies completed on the reader. Reader only. */
    private void writeLocal() {
        if (local.isEmpty()) {
            return;
        }
        writeLock.lock();
        try {
            write(local);
        } finally {
            writeLock.unlock();
        }
        local.clear();
    }

    /** The writer thread: replies of requests completed elsewhere, as many per write as are queued. */
    private void writeLoop() {
        List<Reply> batch = new ArrayList<>();
        try {
            while (true) {
                Reply first = queued.take();
                if (first == STOP) {
                    return;
                }
                batch.add(first);
                Reply next;
                boolean stop = false;
                while (batch.size() < 64 && (next = queued.poll()) != null) {
                    if (next == STOP) {
                        stop = true;
                        break;
                    }
                    batch.add(next);
                }
                writeLock.lock();
                try {
                    write(batch);
                } finally {
                    writeLock.unlock();
                }
                batch.clear();
                if (stop) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Writes whole replies with gathering writes, then releases their requests. Under {@link #writeLock}. */
    private void write(List<Reply> replies) {
        if (!broken) {
            int parts = 0;
            for (Reply r : replies) {
                parts += r.parts.length;
            }
            ByteBuffer[] all = new ByteBuffer[parts];
            int i = 0;
            for (Reply r : replies) {
                for (ByteBuffer b : r.parts) {
                    all[i++] = b;
                }
            }
            try {
                long left = 0;
                for (ByteBuffer b : all) {
                    left += b.remaining();
                }
                // Gathering writes on the JDK's own channels; junixsocket's (an inherited socket) one buffer at a time.
                SocketChannel gathering = channel instanceof SocketChannel s
                        && s.provider() == java.nio.channels.spi.SelectorProvider.provider() ? s : null;
                while (left > 0) {
                    long n = gathering != null ? gathering.write(all) : writeEach(all);
                    left -= n;
                }
            } catch (IOException | RuntimeException e) {
                broken = true; // the client is gone: later replies are dropped
                LOG.log(Level.DEBUG, () -> peer + ": writing replies failed: " + e);
            }
        }
        for (Reply r : replies) {
            Pending p = r.request;
            if (p.buffer != null) {
                pool.give(p.buffer);
            }
            release(1, p.permits);
        }
    }

    private long writeEach(ByteBuffer[] all) throws IOException {
        long n = 0;
        for (ByteBuffer b : all) {
            n += channel.write(b);
        }
        return n;
    }

    /**
     * The end of transmission: every request submitted completes and its reply is sent (or dropped), then the
     * writer stops. Reader only.
     */
    private void drain() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DRAIN_TIMEOUT_MS);
        try {
            while (true) {
                writeLocal();
                if (requestPermits.tryAcquire(MAX_IN_FLIGHT, 10, TimeUnit.MILLISECONDS)) {
                    requestPermits.release(MAX_IN_FLIGHT);
                    break;
                }
                if (System.nanoTime() - deadline > 0) {
                    LOG.log(Level.ERROR, peer + ": " + (MAX_IN_FLIGHT - requestPermits.availablePermits())
                            + " requests still in flight after " + DRAIN_TIMEOUT_MS + " ms; closing anyway");
                    break;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        queued.add(STOP);
        try {
            writer.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
