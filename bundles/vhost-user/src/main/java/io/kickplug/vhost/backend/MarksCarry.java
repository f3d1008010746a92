package io.kickplug.vhost.backend;

/**
 * Carries the dirty-log marks a session leaves uncollected into the log of the export's next session (a bundle
 * update under the export during a live migration). QEMU 7.2 collects the log by exchanging its words with 0, but on
 * a back-end disconnect it marks the vhost device stopped before the stop that would sync the log, so whatever the
 * session's log still holds when the session ends is a mark QEMU has not collected. A {@link BackendDevice} hands
 * those over when its session ends with logging on ({@link #left}), and takes them at the next session's
 * SET_LOG_BASE ({@link #take}), before its device writes anything; a next session whose device starts without
 * logging drops them ({@link #discard}).
 *
 * <p>Called on the session's message thread.
 */
public interface MarksCarry {

    /** The session ends with its log on; {@code marks} are the bits its log still holds (never empty). */
    void left(DirtyMarks marks);

    /** The marks earlier sessions of the export left, now owned by the caller; {@code null} when there are none. */
    DirtyMarks take();

    /**
     * The session's device starts without dirty logging (LOG_ALL not acked): pending marks belong to a migration
     * that ended, and are dropped with a warning. Nothing when there are none.
     */
    void discard(String why);

    /** Carries nothing: marks left are dropped silently (the front-end collects its log, or no one asks). */
    MarksCarry NONE = new MarksCarry() {
        @Override
        public void left(DirtyMarks marks) {
        }

        @Override
        public DirtyMarks take() {
            return null;
        }

        @Override
        public void discard(String why) {
        }
    };
}
