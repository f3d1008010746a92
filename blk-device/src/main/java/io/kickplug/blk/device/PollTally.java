package io.kickplug.blk.device;

import io.kickplug.api.poll.PollCounters;

/** What device-side polling found on one queue, kept across resets. Written on the queue's I/O thread. */
final class PollTally {

    private volatile long hits;
    private volatile long misses;
    private volatile long nanos;

    /** I/O thread only (single writer). */
    void add(int hit, int miss, long pollNanos) {
        hits += hit;
        misses += miss;
        nanos += pollNanos;
    }

    PollCounters snapshot() {
        return new PollCounters(hits, misses, nanos);
    }
}
