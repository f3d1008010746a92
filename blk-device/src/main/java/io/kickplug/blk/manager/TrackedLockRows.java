package io.kickplug.blk.manager;

import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.blk.tracked.TrackedRequests;

import java.util.List;

/** The lock-statistics rows of one device's tracked-requests locks, for {@link DiskRegistry#lockStats}. */
final class TrackedLockRows {
    private TrackedLockRows() {
    }

    /**
     * Adds one row per lock kind in use now or used before, named {@code PREFIX tracked-KIND} ("d1 tracked-mutex",
     * "d1 export0 tracked-mutex"; a sharded lock's shards together).
     */
    static void add(List<LockStatRow> rows, TrackedRequests tracked, String prefix) {
        for (TrackedLockKind kind : TrackedLockKind.values()) {
            LockStatRow row = tracked.stats(kind).row(prefix + " tracked-" + kind.label());
            if (kind == tracked.kind() || row.acquisitions() > 0) {
                rows.add(row);
            }
        }
    }

    /** Zeroes the statistics of every lock kind of {@code tracked}. */
    static void reset(TrackedRequests tracked) {
        for (TrackedLockKind kind : TrackedLockKind.values()) {
            tracked.stats(kind).reset();
        }
    }
}
