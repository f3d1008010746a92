package io.kickplug.vhost.backend;

import io.kickplug.vhost.protocol.Fds;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.MessageChannel;
import io.kickplug.vhost.protocol.ProtocolException;
import io.kickplug.vhost.protocol.VhostUser;
import java.io.Closeable;
import java.io.FileDescriptor;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.newsclub.net.unix.AFUNIXSocket;
import org.newsclub.net.unix.FileDescriptorCast;

/**
 * The back-end request channel (vhost-user.rst "Back-end communication", protocol feature BACKEND_REQ, formerly
 * SLAVE_REQ): the socket the front-end passed with SET_BACKEND_REQ_FD, on which the back-end sends requests of
 * its own. Kickplug sends one: BACKEND_CONFIG_CHANGE_MSG, after which QEMU reads the configuration space again
 * (GET_CONFIG on the main channel) and, when the capacity changed, gives the guest a configuration-change
 * interrupt.
 *
 * <p>The messages go out on a thread of their own, never on the caller's: QEMU answers a configuration change
 * with a GET_CONFIG on the main channel before it acknowledges, so a caller that waited for the
 * acknowledgement on the main channel's thread would deadlock, and a shell thread must not wait on a front-end
 * at all. Requests coalesce: while one is being sent, further changes make exactly one more message (the
 * front-end reads the whole configuration each time). With REPLY_ACK negotiated each message carries
 * NEED_REPLY and the thread waits up to {@code replyTimeoutMillis} for the u64 status; a front-end that closes
 * its end, answers something else or does not answer in time gets the channel closed (one log line), and the
 * main channel goes on serving.
 */
final class BackendChannel implements Closeable {

    private static final Logger LOG = System.getLogger(BackendChannel.class.getName());
    /** Default wait for a REPLY_ACK answer. QEMU answers after a GET_CONFIG round trip on the main channel. */
    static final long REPLY_TIMEOUT_MILLIS = 10_000;

    private final String name;
    private final AFUNIXSocket socket;
    private final MessageChannel channel;
    private final boolean replyAck;
    private final Thread thread;
    private boolean pending;
    private boolean closed;
    private String closeReason;
    private long sent;
    private long acknowledged;

    private BackendChannel(String name, AFUNIXSocket socket, boolean replyAck, long replyTimeoutMillis)
            throws IOException {
        this.name = name;
        this.socket = socket;
        this.replyAck = replyAck;
        socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, replyTimeoutMillis));
        this.channel = new MessageChannel(socket);
        this.thread = new Thread(this::run, "kickplug-vhost-" + name + "-backend-req");
        this.thread.setDaemon(true);
    }

    /**
     * Takes over {@code fd} (a connected Unix stream socket from SET_BACKEND_REQ_FD) and starts the sending
     * thread. On failure the descriptor is closed.
     *
     * @param replyAck REPLY_ACK was negotiated: messages ask for an answer
     */
    static BackendChannel open(String name, FileDescriptor fd, boolean replyAck, long replyTimeoutMillis)
            throws IOException {
        AFUNIXSocket socket;
        try {
            socket = FileDescriptorCast.using(fd).as(AFUNIXSocket.class);
        } catch (IOException | RuntimeException e) {
            Fds.close(fd);
            throw new IOException("the SET_BACKEND_REQ_FD descriptor is not a Unix socket: " + e.getMessage(), e);
        }
        try {
            BackendChannel c = new BackendChannel(name, socket, replyAck, replyTimeoutMillis);
            c.thread.start();
            return c;
        } catch (IOException | RuntimeException e) {
            socket.close();
            Fds.close(fd);
            throw e;
        }
    }

    /** Asks for one BACKEND_CONFIG_CHANGE_MSG; returns at once. Returns false when the channel is closed. */
    synchronized boolean configChanged() {
        if (closed) {
            return false;
        }
        pending = true;
        notifyAll();
        return true;
    }

    synchronized boolean isOpen() {
        return !closed;
    }

    /** Messages written so far. */
    synchronized long sent() {
        return sent;
    }

    /** Messages the front-end acknowledged with status 0 (REPLY_ACK only). */
    synchronized long acknowledged() {
        return acknowledged;
    }

    /** Why the channel closed, or {@code null} while it is open. */
    synchronized String closeReason() {
        return closeReason;
    }

    /** Waits until the channel has written {@code n} messages, or closed. For tests and the shell. */
    synchronized boolean awaitSent(long n, long timeout, TimeUnit unit) throws InterruptedException {
        return await(() -> sent >= n || closed, timeout, unit) && sent >= n;
    }

    /**
     * Waits until {@code condition}, read under this channel's monitor, holds: every change of the channel's state
     * (a message written, an answer counted, the channel closed) notifies. For tests and the shell.
     */
    synchronized boolean await(BooleanSupplier condition, long timeout, TimeUnit unit) throws InterruptedException {
        return MonitorWait.await(this, condition, timeout, unit);
    }

    private void run() {
        String end = "closed by the back-end";
        try {
            while (true) {
                synchronized (this) {
                    while (!pending && !closed) {
                        wait();
                    }
                    if (closed) {
                        return;
                    }
                    pending = false;
                }
                sendConfigChange();
            }
        } catch (InterruptedException e) {
            end = "interrupted";
        } catch (ProtocolException | IOException e) {
            end = e instanceof SocketTimeoutException ? "the front-end did not acknowledge a configuration change"
                    + " within the timeout" : e.getMessage();
        } finally {
            shut(end);
        }
    }

    private void sendConfigChange() throws IOException, ProtocolException {
        int flags = VhostUser.VERSION | (replyAck ? VhostUser.FLAG_NEED_REPLY : 0);
        channel.send(VhostUser.BACKEND_CONFIG_CHANGE_MSG, flags, new byte[0], null);
        synchronized (this) {
            sent++;
            notifyAll();
        }
        if (!replyAck) {
            return;
        }
        Message r = channel.read();
        if (r == null) {
            throw new IOException("the front-end closed the back-end channel");
        }
        Fds.closeAll(r.fds());
        if (r.request() != VhostUser.BACKEND_CONFIG_CHANGE_MSG || (r.flags() & VhostUser.FLAG_REPLY) == 0
                || r.size() != 8) {
            throw new ProtocolException("answer " + r.name() + " (flags 0x" + Integer.toHexString(r.flags()) + ", "
                    + r.size() + " bytes) to BACKEND_CONFIG_CHANGE_MSG is not a REPLY_ACK");
        }
        long status = r.body().getLong();
        if (status != 0) {
            LOG.log(Level.WARNING, "vhost-user " + name + ": the front-end failed the configuration change (status "
                    + status + ")");
            return;
        }
        long n;
        synchronized (this) {
            n = ++acknowledged;
            notifyAll();
        }
        LOG.log(Level.INFO, "vhost-user " + name + ": the front-end acknowledged configuration change " + n);
    }

    /** Marks the channel closed and closes the socket (once), logging why unless the back-end closed it. */
    private void shut(String why) {
        boolean log;
        synchronized (this) {
            log = !closed;
            closed = true;
            if (closeReason == null) {
                closeReason = why;
            }
            notifyAll();
        }
        if (log) {
            LOG.log(Level.WARNING, "vhost-user " + name + ": back-end request channel closed: " + why);
        }
        try {
            socket.close();
        } catch (IOException e) {
            // closing a socket that failed
        }
    }

    /** Stops the thread and closes the socket; waits briefly for the thread. */
    @Override
    public void close() {
        synchronized (this) {
            if (!closed) {
                closed = true;
                closeReason = "closed by the back-end";
            }
            notifyAll();
        }
        try {
            // Unblocks a thread waiting for an answer; the thread then closes the socket as well.
            socket.shutdownInput();
            socket.shutdownOutput();
        } catch (IOException e) {
            // already closed
        }
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            socket.close();
        } catch (IOException e) {
            // closing a socket that failed
        }
    }
}
