package io.kickplug.blk.tracked;

import io.kickplug.api.lockstat.LockStatRow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.blk.tracked.TrackedRequests.Access;
import io.kickplug.blk.tracked.TrackedRequests.Request;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The ordering rules of the tracked list, single-threaded, for each lock kind. */
class TrackedRequestsTest {

    /** A registered request and whether its continuation ran. */
    private static final class Probe {
        final List<String> log;
        final String name;
        Request request;
        boolean startedNow;
        int resumed;

        Probe(List<String> log, String name) {
            this.log = log;
            this.name = name;
        }

        void resume() {
            resumed++;
            log.add(name);
        }

        boolean running() {
            return startedNow || resumed > 0;
        }
    }

    private final List<String> started = new ArrayList<>();

    private Probe begin(TrackedRequests t, String name, Access access, long first, long end, int thread) {
        Probe p = new Probe(started, name);
        p.request = t.begin(access, first, end, thread, p::resume);
        p.startedNow = p.request.arm();
        if (p.startedNow) {
            started.add(name);
        }
        return p;
    }

    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void flushWaitsForEveryEarlierWriteButNotForLaterOnes(TrackedLockKind kind) {
        TrackedRequests t = new TrackedRequests(kind, 2);
        Probe w1 = begin(t, "w1", Access.WRITE, 0, 8, 0);
        Probe read = begin(t, "r", Access.READ, 0, 8, 1);
        Probe w2 = begin(t, "w2", Access.WRITE, 100, 108, 1);
        Probe flush = begin(t, "flush", Access.FLUSH, 0, 0, 0);
        Probe w3 = begin(t, "w3", Access.WRITE, 0, 8, 1);
        assertTrue(w1.running() && read.running() && w2.running() && w3.running(), "reads and writes never wait");
        assertFalse(flush.running(), "flush must wait for w1 and w2");
        w1.request.end();
        read.request.end();
        w3.request.end();
        assertFalse(flush.running(), "flush still waits for w2; a later write does not hold it");
        w2.request.end();
        assertEquals(1, flush.resumed);
        flush.request.end();
        assertEquals(0, t.size());
    }

    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void writeZeroesWaitsForAnOverlappingEarlierWrite(TrackedLockKind kind) {
        TrackedRequests t = new TrackedRequests(kind, 2);
        Probe write = begin(t, "write", Access.WRITE, 10, 20, 0);
        Probe zeroes = begin(t, "zeroes", Access.SERIALISING, 19, 30, 1);
        assertFalse(zeroes.running());
        write.request.end();
        assertEquals(1, zeroes.resumed);
    }

    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void writeAndReadWaitForAnOverlappingEarlierWriteZeroes(TrackedLockKind kind) {
        TrackedRequests t = new TrackedRequests(kind, 2);
        Probe zeroes = begin(t, "zeroes", Access.SERIALISING, 10, 20, 1);
        Probe write = begin(t, "write", Access.WRITE, 0, 11, 0);
        Probe read = begin(t, "read", Access.READ, 19, 25, 0);
        Probe apart = begin(t, "apart", Access.WRITE, 20, 30, 0);
        assertFalse(write.running());
        assertFalse(read.running());
        assertTrue(apart.running(), "ranges are half-open: [10,20) and [20,30) do not overlap");
        zeroes.request.end();
        assertEquals(1, write.resumed);
        assertEquals(1, read.resumed);
    }

    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void nonOverlappingSerialisingRequestsDoNotWait(TrackedLockKind kind) {
        TrackedRequests t = new TrackedRequests(kind, 2);
        Probe a = begin(t, "a", Access.SERIALISING, 0, 10, 0);
        Probe b = begin(t, "b", Access.WRITE, 10, 20, 1);
        Probe c = begin(t, "c", Access.SERIALISING, 20, 30, 1);
        Probe d = begin(t, "d", Access.READ, 30, 40, 0);
        assertTrue(a.running() && b.running() && c.running() && d.running());
    }

    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void overlappingReadsAndWritesWithoutSerialisingRequestsDoNotWait(TrackedLockKind kind) {
        TrackedRequests t = new TrackedRequests(kind, 1);
        Probe a = begin(t, "a", Access.WRITE, 0, 10, 0);
        Probe b = begin(t, "b", Access.WRITE, 0, 10, 0);
        Probe c = begin(t, "c", Access.READ, 0, 10, 0);
        assertTrue(a.running() && b.running() && c.running());
    }

    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void aChainOfDependenciesResumesInOrderExactlyOnce(TrackedLockKind kind) {
        TrackedRequests t = new TrackedRequests(kind, 3);
        Probe w = begin(t, "w", Access.WRITE, 0, 8, 0);
        Probe z = begin(t, "z", Access.SERIALISING, 0, 8, 1);
        Probe w2 = begin(t, "w2", Access.WRITE, 4, 12, 2);
        Probe f = begin(t, "f", Access.FLUSH, 0, 0, 0);
        assertEquals(List.of("w"), started);
        w.request.end();
        assertEquals(List.of("w", "z"), started);
        z.request.end();
        assertEquals(List.of("w", "z", "w2"), started);
        w2.request.end();
        assertEquals(List.of("w", "z", "w2", "f"), started);
        f.request.end();
        assertEquals(List.of(1, 1, 1), List.of(z.resumed, w2.resumed, f.resumed));
        assertThrows(IllegalStateException.class, () -> f.request.end());
    }

    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void aSwitchKeepsOrderingAcrossGenerations(TrackedLockKind from) {
        for (TrackedLockKind to : TrackedLockKind.values()) {
            if (to == from) {
                continue;
            }
            started.clear();
            TrackedRequests t = new TrackedRequests(from, 2);
            Probe oldWrite = begin(t, "old", Access.WRITE, 0, 8, 0);
            t.switchTo(to);
            assertEquals(to, t.kind());
            assertEquals(from, oldWrite.request.lockKind(), "a request keeps the lock it started with");
            assertEquals(2, t.generations());
            Probe zeroes = begin(t, "zeroes", Access.SERIALISING, 0, 8, 1);
            Probe flush = begin(t, "flush", Access.FLUSH, 0, 0, 1);
            assertEquals(to, zeroes.request.lockKind());
            assertFalse(zeroes.running(), "the new generation sees the old one's write");
            assertFalse(flush.running());
            oldWrite.request.end();
            assertEquals(1, t.generations(), "the empty retired generation is dropped");
            assertEquals(1, zeroes.resumed);
            zeroes.request.end();
            assertEquals(1, flush.resumed);
            flush.request.end();
            assertEquals(0, t.size());
        }
    }

    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void locksCountAcquisitions(TrackedLockKind kind) {
        TrackedRequests t = new TrackedRequests(kind, 2);
        long before = t.stats(kind).row("").acquisitions();
        begin(t, "w", Access.WRITE, 0, 8, 0).request.end();
        LockStatRow after = t.stats(kind).row("");
        assertEquals(before + 2, after.acquisitions(), "one to insert, one to remove");
        assertEquals(0, after.contentions());
    }
}
