package io.kickplug.vhost.server;

import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.vhost.backend.MessageHandler;
import io.kickplug.vhost.backend.MonitorWait;
import io.kickplug.vhost.backend.SessionStatus;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.MessageChannel;
import io.kickplug.vhost.protocol.ProtocolException;
import java.io.Closeable;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.newsclub.net.unix.AFUNIXServerSocket;
import org.newsclub.net.unix.AFUNIXSocket;
import org.newsclub.net.unix.AFUNIXSocketCredentials;

/**
 * A vhost-user-blk export: a listening Unix socket that serves one front-end at a time with a
 * {@link MessageHandler} over the export's device, and accepts the next front-end after a disconnect.
 * A second front-end that connects while one is served is told so in the log and disconnected.
 */
public final class VhostUserServer implements Closeable {

    private static final Logger LOG = System.getLogger(VhostUserServer.class.getName());
    private static final long JOIN_SECONDS = 30;

    /** What the export is doing. */
    public enum State {
        LISTENING, CONNECTED, CLOSED
    }

    /**
     * A snapshot for the shell; {@code pendingMarks}: dirty-log pages an earlier session left uncollected that wait
     * for the next session's log ({@link PendingMarks}).
     */
    public record Status(String name, Path socket, State state, long sessions, long rejected, String peer,
            SessionStatus connection, long pendingMarks) {
    }

    private final String name;
    /** The socket file, or for an inherited socket {@code fd:N} (no file of ours). */
    private final Path socketPath;
    /** The inherited descriptor served, or -1 for a socket file made here. */
    private final int inheritedFd;
    private final VirtioDevice device;
    private final VirtqueueFactory queueFactory;
    private final GuestMemoryFactory memoryFactory;
    private final AFUNIXServerSocket server;
    private final Object fileKey;
    private final Thread acceptThread;
    private final AtomicLong sessions = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    /** Dirty-log pages marked by the sessions that ended ({@link #pagesMarked}). */
    private final AtomicLong pagesMarkedBefore = new AtomicLong();
    private volatile boolean closed;
    private volatile Session session;
    /** Where sessions leave their uncollected dirty-log marks, and the next session finds them. */
    private final PendingMarks pendingMarks;

    /**
     * Creates the socket (mode 0600) and starts accepting.
     *
     * @throws IOException when the path exists and is not a stale socket, or the socket cannot be created
     */
    public VhostUserServer(String name, Path socketPath, VirtioDevice device, VirtqueueFactory queueFactory,
            GuestMemoryFactory memoryFactory) throws IOException {
        this(name, socketPath, device, queueFactory, memoryFactory, new PendingMarks());
    }

    /**
     * As {@link #VhostUserServer(String, Path, VirtioDevice, VirtqueueFactory, GuestMemoryFactory)}, the dirty-log
     * marks its sessions leave uncollected kept in {@code pendingMarks}, which outlives the export (a bundle update
     * ends it and makes it again) and gives them to the export's next session.
     */
    public VhostUserServer(String name, Path socketPath, VirtioDevice device, VirtqueueFactory queueFactory,
            GuestMemoryFactory memoryFactory, PendingMarks pendingMarks) throws IOException {
        this(name, socketPath.toAbsolutePath(), -1, device, queueFactory, memoryFactory, pendingMarks);
    }

    /**
     * Serves the listening Unix socket this process inherited as descriptor {@code fd} (QEMU's
     * {@code addr.type=fd}; systemd's socket activation), through a duplicate of it. The socket file, if any, is
     * not ours and stays; so does the socket itself when the export closes (no shutdown: the export may be made
     * again on {@code fd}, after a bundle update), see {@link #close}.
     *
     * @throws IOException when {@code fd} is not a listening Unix socket
     */
    public static VhostUserServer inherited(String name, int fd, VirtioDevice device, VirtqueueFactory queueFactory,
            GuestMemoryFactory memoryFactory, PendingMarks pendingMarks) throws IOException {
        return new VhostUserServer(name, Path.of("fd:" + fd), fd, device, queueFactory, memoryFactory, pendingMarks);
    }

    private VhostUserServer(String name, Path socketPath, int fd, VirtioDevice device, VirtqueueFactory queueFactory,
            GuestMemoryFactory memoryFactory, PendingMarks pendingMarks) throws IOException {
        this.name = name;
        this.pendingMarks = pendingMarks;
        this.socketPath = socketPath;
        this.inheritedFd = fd;
        this.device = device;
        this.queueFactory = queueFactory;
        this.memoryFactory = memoryFactory;
        if (fd >= 0) {
            this.server = InheritedSocket.listener(fd);
            this.fileKey = null;
        } else {
            SocketPaths.clearStale(this.socketPath);
            this.server = SocketPaths.bind(this.socketPath);
            this.fileKey = Files.readAttributes(this.socketPath, java.nio.file.attribute.BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS).fileKey();
        }
        this.acceptThread = new Thread(this::acceptLoop, "kickplug-vhost-" + name + "-accept");
        this.acceptThread.setDaemon(true);
        this.acceptThread.start();
        LOG.log(Level.INFO, "vhost-user " + name + ": listening on " + this.socketPath + " (" + device.queueCount()
                + " queues)");
    }

    /** The inherited descriptor this export serves, or -1 for a socket file it made. */
    public int inheritedFd() {
        return inheritedFd;
    }

    public String name() {
        return name;
    }

    public Path socketPath() {
        return socketPath;
    }

    public Status status() {
        Session s = session;
        State state = closed ? State.CLOSED : s == null ? State.LISTENING : State.CONNECTED;
        MessageHandler b = s == null ? null : s.backend;
        return new Status(name, socketPath, state, sessions.get(), rejected.get(), s == null ? null : s.peer,
                b == null ? null : b.status(), pendingMarks.pendingPages(name));
    }

    /**
     * Pages the export's dirty log marked for live migration since the export began, over every front-end it
     * served (the current one included).
     */
    public long pagesMarked() {
        Status s = status();
        return pagesMarkedBefore.get() + (s.connection() == null ? 0 : s.connection().pagesMarked());
    }

    /** Whether the current front-end's device marks its writes in a dirty log (a live migration is under way). */
    public boolean logging() {
        Status s = status();
        return s.connection() != null && s.connection().logging();
    }

    /**
     * Waits until no front-end is connected (the last session ended and its device was reset).
     *
     * @return false on timeout
     */
    public synchronized boolean awaitNoFrontend(long timeout, TimeUnit unit) throws InterruptedException {
        return MonitorWait.await(this, () -> session == null, timeout, unit);
    }

    private void acceptLoop() {
        while (!closed) {
            AFUNIXSocket socket;
            try {
                socket = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.log(Level.ERROR, "vhost-user " + name + ": accept failed, export stops listening: "
                            + e.getMessage());
                }
                return;
            }
            String peer = peer(socket);
            synchronized (this) {
                if (closed) {
                    closeQuietly(socket);
                    return;
                }
                if (session != null) {
                    rejected.incrementAndGet();
                    LOG.log(Level.WARNING, "vhost-user " + name + ": refusing front-end " + peer
                            + ": one front-end at a time, " + session.peer + " is connected");
                    closeQuietly(socket);
                    continue;
                }
                long number = sessions.incrementAndGet();
                Session s = new Session(socket, peer, number);
                session = s;
                s.thread.start();
                notifyAll();
            }
        }
    }

    private static String peer(AFUNIXSocket socket) {
        try {
            AFUNIXSocketCredentials c = socket.getPeerCredentials();
            return "pid " + c.getPid() + " uid " + c.getUid();
        } catch (IOException | RuntimeException e) {
            return "unknown peer";
        }
    }

    /** One connected front-end: its message loop runs on its own thread. */
    private final class Session implements Runnable {
        final AFUNIXSocket socket;
        final String peer;
        final Thread thread;
        volatile MessageHandler backend;

        Session(AFUNIXSocket socket, String peer, long number) {
            this.socket = socket;
            this.peer = peer;
            this.thread = new Thread(this, "kickplug-vhost-" + name + "-session" + number);
            this.thread.setDaemon(true);
        }

        @Override
        public void run() {
            LOG.log(Level.INFO, "vhost-user " + name + ": front-end connected (" + peer + ")");
            String end = "front-end disconnected";
            try {
                MessageChannel channel = new MessageChannel(socket);
                backend = new MessageHandler(name, device, queueFactory, memoryFactory, channel::reply,
                        pendingMarks.carry(name, socketPath.toString()));
                Message m;
                while ((m = channel.read()) != null) {
                    backend.handle(m);
                }
            } catch (ProtocolException e) {
                end = "closing the connection: " + e.getMessage();
            } catch (IOException e) {
                end = closed ? "export stopped" : "connection lost: " + e.getMessage();
            } catch (RuntimeException | Error e) {
                LOG.log(Level.ERROR, "vhost-user " + name + ": session failed", e);
                end = "session failed: " + e;
            } finally {
                // The backend first: junixsocket closes every descriptor received on a socket when the socket
                // closes, and the backend must stop using its kick and call descriptors before that.
                MessageHandler b = backend;
                if (b != null) {
                    try {
                        b.close();
                    } catch (RuntimeException e) {
                        LOG.log(Level.ERROR, "vhost-user " + name + ": cleaning up the session failed", e);
                    }
                }
                closeQuietly(socket);
                synchronized (VhostUserServer.this) {
                    if (b != null) {
                        pagesMarkedBefore.addAndGet(b.status().pagesMarked());
                    }
                    if (session == this) {
                        session = null;
                    }
                    VhostUserServer.this.notifyAll();
                }
                LOG.log(closed ? Level.DEBUG : Level.INFO, "vhost-user " + name + ": " + end
                        + (closed ? "" : "; waiting for the next front-end"));
            }
        }
    }

    /** Closes the socket and the session (resetting the device) and removes the socket file. */
    @Override
    public void close() {
        Session s;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            s = session;
        }
        if (inheritedFd >= 0) {
            InheritedSocket.close(server, acceptThread, name);
        } else {
            try {
                server.close();
            } catch (IOException e) {
                LOG.log(Level.DEBUG, "vhost-user " + name + ": closing the listening socket: " + e.getMessage());
            }
        }
        if (s != null) {
            // Shut the input down rather than close the socket: the session thread then reads end of file,
            // closes its backend and then the socket itself. Closing the socket from here would race the
            // session's own closing of received descriptors inside junixsocket (a lock-order deadlock).
            try {
                s.socket.shutdownInput();
            } catch (IOException e) {
                LOG.log(Level.DEBUG, "vhost-user " + name + ": shutting the connection down: " + e.getMessage());
            }
            join(s.thread);
            if (s.thread.isAlive()) {
                closeQuietly(s.socket);
                join(s.thread);
            }
        }
        join(acceptThread);
        if (inheritedFd >= 0) {
            LOG.log(Level.INFO, "vhost-user " + name + ": stopped listening on inherited descriptor " + inheritedFd);
            return;
        }
        try {
            Object key = Files.readAttributes(socketPath, java.nio.file.attribute.BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS).fileKey();
            if (key != null && key.equals(fileKey)) {
                Files.deleteIfExists(socketPath);
            }
        } catch (IOException e) {
            // the file is gone already, or replaced by someone else's: leave it
        }
        LOG.log(Level.INFO, "vhost-user " + name + ": stopped listening on " + socketPath);
    }

    private void join(Thread t) {
        if (t == Thread.currentThread()) {
            return;
        }
        try {
            t.join(TimeUnit.SECONDS.toMillis(JOIN_SECONDS));
            if (t.isAlive()) {
                LOG.log(Level.ERROR, "vhost-user " + name + ": thread " + t.getName() + " did not end in "
                        + JOIN_SECONDS + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(AFUNIXSocket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing a socket that failed
        }
    }
}
