package io.kickplug.guest.lock;

import io.kickplug.api.lockstat.LockCounters;
import io.kickplug.api.lockstat.LockStatRow;

/**
 * The statistics of one lock class (all locks of one name), as Linux's lock_stat keeps them per class: a name
 * over the shared {@link LockCounters}. Updated by the lock's holder, read by anyone.
 */
public final class LockClass {

    private final String name;
    private final LockCounters counters = new LockCounters();

    LockClass(String name) {
        this.name = name;
    }

    public String name() {
        return name;
    }

    /** A contention: the acquirer found the lock held; {@code bounce} when it last went to another vCPU. */
    void contended(boolean bounce) {
        counters.contended(bounce);
    }

    /** An acquisition; {@code waitNanos} is -1 for an uncontended one (no wait time is recorded then). */
    void acquired(boolean bounce, long waitNanos) {
        counters.acquired(bounce, waitNanos);
    }

    void released(long holdNanos) {
        counters.released(holdNanos);
    }

    /** Minimums read 0 while nothing was recorded, as in /proc/lock_stat. */
    public LockStatRow snapshot() {
        return counters.row(name);
    }

    public void reset() {
        counters.reset();
    }
}
