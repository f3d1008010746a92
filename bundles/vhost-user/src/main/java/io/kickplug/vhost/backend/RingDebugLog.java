package io.kickplug.vhost.backend;

import io.kickplug.api.memory.GuestMemory;
import java.io.FileDescriptor;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;

/**
 * The debug log of one connection's rings: kicks, calls, call descriptors, starts and stops with the ring's
 * indices as guest memory holds them. It logs under {@link BackendDevice}'s name, and only when that logger is
 * at DEBUG. Each method is called on the thread the event happens on (kicks and calls on I/O threads, the rest on
 * the connection's message thread).
 */
final class RingDebugLog {

    private static final Logger LOG = System.getLogger(BackendDevice.class.getName());
    /** The debug log shows this many kicks and calls of each queue after each start, then every 10,000th. */
    private static final long DEBUG_EVENTS = 200;

    private final String name;

    RingDebugLog(String name) {
        this.name = name;
    }

    boolean enabled() {
        return LOG.isLoggable(Level.DEBUG);
    }

    /** A kick of queue {@code queue} ({@code running}: the kick reaches the device unless it needs a reset). */
    void kick(Vring[] rings, int queue, boolean running, boolean needsReset) {
        if (enabled() && queue < rings.length) {
            long n = rings[queue].kicksSinceStart.incrementAndGet();
            if (n <= DEBUG_EVENTS || n % 10_000 == 0) {
                LOG.log(Level.DEBUG, "vhost-user " + name + ": queue " + queue + " kick " + n + (running ? ""
                        : " (queue not running)") + (needsReset ? " (needs reset)" : ""));
            }
        }
    }

    /** A used-buffer notification of ring {@code r} on {@code call}, {@code sent} or not. */
    void call(Vring r, boolean sent, EventFd call) {
        if (enabled()) {
            long n = r.callsSinceStart.incrementAndGet();
            if (n <= DEBUG_EVENTS || n % 10_000 == 0) {
                LOG.log(Level.DEBUG, "vhost-user " + name + ": queue " + r.index + " call " + n
                        + (sent ? "" : call == null ? " not sent (no call descriptor)" : " not sent (closed)"));
            }
        }
    }

    /** SET_VRING_CALL gave ring {@code r} the descriptor {@code fd} (null: NOFD), replacing {@code old}. */
    void callSet(Vring r, FileDescriptor fd, EventFd old, GuestMemory memory) {
        if (enabled()) {
            LOG.log(Level.DEBUG, "vhost-user " + name + ": queue " + r.index + " call " + (fd == null ? "NOFD" : "set")
                    + (r.view != null ? " while running" : "") + (old != null ? ", replacing one signalled "
                    + old.signals() + " times" : "") + "; " + ringState(r, memory));
        }
    }

    /** The new call descriptor of queue {@code index} is signalled once for {@code signals} of the old one. */
    void callResignalled(int index, long signals) {
        LOG.log(Level.DEBUG, () -> "vhost-user " + name + ": queue " + index + " new call descriptor signalled"
                + " once for the " + signals + " notifications of the one it replaces");
    }

    /** Ring {@code r} starts with the view just created. */
    void started(Vring r, long features, GuestMemory memory) {
        if (enabled()) {
            LOG.log(Level.DEBUG, "vhost-user " + name + ": queue " + r.index + " starts at available index "
                    + r.view.nextAvail() + ", used index " + r.view.nextUsed() + " (features 0x"
                    + Long.toHexString(features) + ", call " + (r.callNoFd ? "NOFD" : r.call == null ? "none"
                    : "set") + "); " + ringState(r, memory));
        }
    }

    /** The device runs the queues in {@code runningNow}. */
    void running(boolean[] runningNow) {
        LOG.log(Level.DEBUG, () -> "vhost-user " + name + ": running queues " + describe(runningNow));
    }

    /**
     * Ring {@code r} stopped (its view still set); {@code usedBefore} is used.idx before the reset
     * ({@link #publishedUsed}, -1 when unknown).
     */
    void stopped(Vring r, int usedBefore, GuestMemory memory) {
        if (enabled()) {
            LOG.log(Level.DEBUG, "vhost-user " + name + ": queue " + r.index + " stopped at available index "
                    + r.view.nextAvail() + ", used index " + r.view.nextUsed() + " after " + r.kicksSinceStart
                    + " kicks and " + r.callsSinceStart + " calls" + (usedBefore < 0 ? ""
                    : ", the reset completed " + ((r.view.nextUsed() - usedBefore) & 0xffff)
                    + " requests") + "; " + ringState(r, memory));
        }
    }

    /** Ring {@code r} is notified for the requests its stop completed. */
    void notifiedAfterStop(Vring r) {
        LOG.log(Level.DEBUG, () -> "vhost-user " + name + ": queue " + r.index
                + " notifies the requests its stop completed");
    }

    /** Ring {@code r} could not be notified after its stop. */
    void notNotifiedAfterStop(Vring r, RuntimeException e) {
        LOG.log(Level.DEBUG, () -> "vhost-user " + name + ": queue " + r.index + " not notified after its stop: "
                + e.getMessage());
    }

    /**
     * The ring's indices in guest memory, for the debug log: avail flags/idx/used_event, used flags/idx/avail_event.
     * Plain reads from the message thread while an I/O thread may write: a snapshot, not a synchronised view.
     */
    static String ringState(Vring r, GuestMemory m) {
        if (m == null || r.availGpa < 0 || r.num == 0) {
            return "ring not mapped";
        }
        try {
            int n = r.num;
            return String.format("avail flags %d idx %d used_event %d; used flags %d idx %d avail_event %d",
                    m.readU16(r.availGpa) & 0xffff, m.readU16(r.availGpa + 2) & 0xffff,
                    m.readU16(r.availGpa + 4 + 2L * n) & 0xffff, m.readU16(r.usedGpa) & 0xffff,
                    m.readU16(r.usedGpa + 2) & 0xffff, m.readU16(r.usedGpa + 4 + 8L * n) & 0xffff);
        } catch (RuntimeException e) {
            return "ring not readable: " + e.getMessage();
        }
    }

    /** Per running ring, used.idx as guest memory holds it now (a snapshot for the debug log), else -1. */
    static int[] publishedUsed(Vring[] rings, GuestMemory memory) {
        int[] out = new int[rings.length];
        for (Vring r : rings) {
            out[r.index] = -1;
            if (r.view != null && memory != null && r.usedGpa >= 0) {
                try {
                    out[r.index] = memory.readU16(r.usedGpa + 2) & 0xffff;
                } catch (RuntimeException e) {
                    // leave -1
                }
            }
        }
        return out;
    }

    private static String describe(boolean[] set) {
        List<Integer> q = new ArrayList<>();
        for (int i = 0; i < set.length; i++) {
            if (set[i]) {
                q.add(i);
            }
        }
        return q.toString();
    }
}
