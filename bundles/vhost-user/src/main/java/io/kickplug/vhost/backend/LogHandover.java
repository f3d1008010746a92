package io.kickplug.vhost.backend;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * The dirty-log marks that cross a session's ends (vhost-user.rst "Migration"): those earlier sessions of the export
 * left uncollected go into this session's first log base before its device writes anything, and those this session
 * leaves in its log go to the export's {@link MarksCarry} when it ends. QEMU collects the log by exchanging its words
 * with 0, so the bits a log still holds when its session ends are marks QEMU has not collected. Called on the
 * session's message thread.
 */
final class LogHandover {

    private static final Logger LOG = System.getLogger(LogHandover.class.getName());

    private final String name;
    private final MarksCarry carry;
    /** Pages carried from earlier sessions into this session's log ({@link #carryInto}). */
    private volatile long carriedPages;

    LogHandover(String name, MarksCarry carry) {
        this.name = name;
        this.carry = carry;
    }

    /**
     * ORs into {@code bitmap}, before any marking thread can see it, the marks earlier sessions of the export left
     * uncollected (a bundle update during a live migration ended them); pages past the bitmap's end are not guest
     * memory the front-end tracks any more (its memory map shrank) and are dropped with a warning.
     */
    void carryInto(DirtyLog.Bitmap bitmap) {
        DirtyMarks carried = carry.take();
        if (carried == null) {
            return;
        }
        long beyond = carried.orInto(bitmap);
        carriedPages += carried.pages() - beyond;
        LOG.log(Level.INFO, "vhost-user " + name + ": " + (carried.pages() - beyond) + " pages an earlier session"
                + " marked and the front-end had not collected are marked in the new dirty log");
        if (beyond > 0) {
            LOG.log(Level.WARNING, "vhost-user " + name + ": " + beyond + " pages an earlier session marked lie"
                    + " beyond the new dirty log of " + bitmap.pages() + " pages (guest memory the front-end no"
                    + " longer has): not marked");
        }
    }

    /** The session's device starts without LOG_ALL: marks still pending belong to a migration that ended. */
    void deviceStartsUnlogged() {
        carry.discard("the front-end started the device without dirty logging");
    }

    /**
     * At the end of a session whose log is on, after the device stopped: the bits {@code log} still holds are marks
     * the front-end has not collected (it clears what it collects); they go to the {@link MarksCarry}.
     * {@code resetsClean} false: a device reset gave up on a request, which may still write and mark the old log.
     */
    void leave(DirtyLog log, boolean resetsClean) {
        long[] dropped = new long[1];
        DirtyMarks left = log.uncollected(dropped);
        if (dropped[0] > 0) {
            LOG.log(Level.ERROR, "vhost-user " + name + ": the session ends with more marks in its dirty log than are"
                    + " kept (" + DirtyMarks.MAX_WORDS + " words): " + dropped[0] + " pages are not carried to the"
                    + " next session and a live migration may miss them");
        }
        if (left.isEmpty()) {
            return;
        }
        LOG.log(Level.INFO, "vhost-user " + name + ": the session ends during dirty logging with " + left.pages()
                + " pages marked that the front-end has not collected; they go into the next session's log"
                + (resetsClean ? "" : " (a device reset gave up on a request, which may still write and mark"
                        + " the old log)"));
        carry.left(left);
    }

    /** Pages carried from earlier sessions into this session's log. */
    long carriedPages() {
        return carriedPages;
    }
}
