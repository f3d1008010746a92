package io.kickplug.vhost.backend;

import io.kickplug.vhost.protocol.Fds;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A received call or error eventfd: {@link #signal()} adds 1 to its counter (an 8-byte native-order
 * write, eventfd(2)). Signalling and closing are serialised, so a signal never reaches a descriptor number
 * the process reused after the close.
 */
final class EventFd {

    private static final Logger LOG = System.getLogger(EventFd.class.getName());
    private static final byte[] ONE = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(1).array();

    private final String what;
    private final FileDescriptor fd;
    private final FileOutputStream out;
    private boolean closed;
    private boolean failedOnce;
    private long signals;

    EventFd(String what, FileDescriptor fd) {
        this.what = what;
        this.fd = fd;
        this.out = new FileOutputStream(fd);
    }

    /** Returns false when the descriptor is closed or the write failed (logged once). */
    synchronized boolean signal() {
        if (closed) {
            return false;
        }
        try {
            out.write(ONE);
            signals++;
            return true;
        } catch (IOException e) {
            // EAGAIN: the counter is saturated, the other side will see it anyway.
            if (!failedOnce) {
                failedOnce = true;
                LOG.log(Level.WARNING, "writing the " + what + " eventfd failed: " + e.getMessage());
            }
            return false;
        }
    }

    synchronized long signals() {
        return signals;
    }

    synchronized boolean isClosed() {
        return closed;
    }

    synchronized void close() {
        if (!closed) {
            closed = true;
            Fds.close(fd);
        }
    }
}
