package io.kickplug.vhost.backend;

import io.kickplug.api.memory.GuestMemory;
import java.io.FileDescriptor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The call and error eventfds of one connection's rings: set by SET_VRING_CALL and SET_VRING_ERR on the message
 * thread, signalled by the device's I/O threads ({@link #usedBuffer}) and on a device error.
 */
final class RingEventFds {

    private final Vring[] rings;
    private final RingDebugLog debug;
    private final AtomicLong interrupts = new AtomicLong();

    RingEventFds(Vring[] rings, RingDebugLog debug) {
        this.rings = rings;
        this.debug = debug;
    }

    /**
     * SET_VRING_CALL; a null {@code fd} is NOFD: the driver polls this queue.
     *
     * <p>No notification is lost to the replacement. An I/O thread that signals the old descriptor after it
     * closed here finds the new one ({@link #usedBuffer}). And when the old one was signalled at all, the new one
     * is signalled once too, as the front-end may not have passed those on: QEMU connects with its
     * <em>masked</em> notifier as each ring's call descriptor (vhost_virtqueue_init) and later sends the guest's
     * notifier without looking at what reached the masked one; upstream's vhost_user_blk_start does so only
     * after it started the rings, so a completion in between (a request pending at a reconnect, or one a stop
     * completed) would never interrupt the guest, and with EVENT_IDX no later completion would either
     * ({@code used_event} stays behind). (QEMU 7.2.22 as packaged here sends the guest's notifier before the
     * rings start; BackendCrashIT's debug log shows the order.) libvhost-user signals every new call descriptor
     * for the same reason ("in case of I/O hang after reconnecting"); a spurious notification is harmless: the
     * driver reads the used ring and finds nothing new.
     */
    void setCall(int index, FileDescriptor fd, GuestMemory memory) {
        Vring r = rings[index];
        EventFd old = r.call;
        EventFd fresh = fd == null ? null : new EventFd("call of queue " + r.index, fd);
        // Published before the old one closes: an I/O thread whose signal finds the old one closed then
        // finds this one (usedBuffer).
        r.call = fresh;
        r.callNoFd = fd == null;
        debug.callSet(r, fd, old, memory);
        if (old != null) {
            old.close(); // serialised with signal(): the count below is final
            if (fresh != null && old.signals() > 0) {
                debug.callResignalled(index, old.signals());
                if (fresh.signal()) {
                    interrupts.incrementAndGet();
                }
            }
        }
    }

    /** SET_VRING_ERR; a null {@code fd} is NOFD. */
    void setErr(int index, FileDescriptor fd) {
        Vring r = rings[index];
        EventFd old = r.err;
        r.err = fd == null ? null : new EventFd("error of queue " + r.index, fd);
        if (old != null) {
            old.close();
        }
    }

    /** The device used buffers of queue {@code queueIndex}: signal its call descriptor. */
    void usedBuffer(int queueIndex) {
        if (queueIndex < 0 || queueIndex >= rings.length) {
            return;
        }
        EventFd call = rings[queueIndex].call;
        // A queue set up with NOFD (a Linux poll queue) is never notified: the driver polls its used ring.
        boolean sent = call != null && call.signal();
        if (!sent && call != null && call.isClosed()) {
            // SET_VRING_CALL replaced it meanwhile (the new one was published before this one closed).
            EventFd now = rings[queueIndex].call;
            sent = now != null && now != call && now.signal();
        }
        if (sent) {
            interrupts.incrementAndGet();
        }
        debug.call(rings[queueIndex], sent, call);
    }

    /** Signals the error descriptor of ring {@code r}, if it has one. */
    static void signalError(Vring r) {
        EventFd err = r.err;
        if (err != null) {
            err.signal();
        }
    }

    /** Closes and forgets the call descriptor of ring {@code r}. */
    static void closeCall(Vring r) {
        EventFd call = r.call;
        r.call = null;
        if (call != null) {
            call.close();
        }
    }

    /** Closes and forgets both eventfds of ring {@code r}. */
    static void close(Vring r) {
        closeCall(r);
        EventFd e = r.err;
        r.err = null;
        if (e != null) {
            e.close();
        }
    }

    /** Used-buffer notifications sent. */
    long interrupts() {
        return interrupts.get();
    }
}
