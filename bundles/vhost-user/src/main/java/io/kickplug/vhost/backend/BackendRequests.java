package io.kickplug.vhost.backend;

import java.io.FileDescriptor;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * A session's back-end request channel (SET_BACKEND_REQ_FD, vhost-user.rst "Back-end communication") and the
 * configuration-change notices the device sends through it. The channel is replaced on the message thread and read
 * by whichever thread reports a configuration change.
 */
final class BackendRequests {

    private static final Logger LOG = System.getLogger(BackendRequests.class.getName());

    private final String name;
    /** The channel, or {@code null} before SET_BACKEND_REQ_FD and after {@link #close}. */
    private volatile BackendChannel channel;
    /** A change that could not be signalled was logged once since the channel was last replaced. */
    private volatile boolean unsignalledLogged;

    BackendRequests(String name) {
        this.name = name;
    }

    /** SET_BACKEND_REQ_FD: replaces the channel (the old one is closed). */
    void replace(FileDescriptor fd, boolean replyAck) throws Refused {
        BackendChannel fresh;
        try {
            fresh = BackendChannel.open(name, fd, replyAck, BackendChannel.REPLY_TIMEOUT_MILLIS);
        } catch (IOException e) {
            throw new Refused(e.getMessage(), e);
        }
        BackendChannel old = channel;
        channel = fresh;
        unsignalledLogged = false;
        if (old != null) {
            old.close();
        }
    }

    /** BACKEND_CONFIG_CHANGE_MSG when there is a channel; logged once when it cannot be sent. */
    void configChanged() {
        BackendChannel c = channel;
        if (c != null && c.configChanged()) {
            return;
        }
        if (!unsignalledLogged) {
            unsignalledLogged = true;
            LOG.log(Level.INFO, "vhost-user " + name + ": configuration change not signalled (no back-end"
                    + " request channel" + (c == null ? " was set up)" : ": " + c.closeReason() + ")"));
        }
    }

    /** Closes the channel; later changes are not signalled. */
    void close() {
        BackendChannel c = channel;
        channel = null;
        if (c != null) {
            c.close();
        }
    }
}
