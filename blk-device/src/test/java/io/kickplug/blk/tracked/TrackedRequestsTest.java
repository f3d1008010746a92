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
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

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

    /** Begins {@code requests} in order, checking that exactly those marked {@code waits} do not start at once. */
    private Map<String, Probe> beginAll(TrackedRequests t, Req... requests) {
        Map<String, Probe> probes = new LinkedHashMap<>();
        for (Req r : requests) {
            Probe p = begin(t, r.name(), r.access(), r.first(), r.end(), r.thread());
            assertEquals(!r.waits(), p.running(), r.name() + (r.waits() ? " must wait" : " must not wait"));
            probes.put(r.name(), p);
        }
        return probes;
    }

    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void flushWaitsForEveryEarlierWriteButNotForLaterOnes(TrackedLockKind kind) {
        TrackedRequests t = new TrackedRequests(kind, 2);
        Map<String, Probe> p = beginAll(t, Req.runs("w1", Access.WRITE, 0, 8, 0), Req.runs("r", Access.READ, 0, 8, 1),
                Req.runs("w2", Access.WRITE, 100, 108, 1), Req.waits("flush", Access.FLUSH, 0, 0, 0),
                Req.runs("w3", Access.WRITE, 0, 8, 1));
        Probe flush = p.get("flush");
        p.get("w1").request.end();
        p.get("r").request.end();
        p.get("w3").request.end();
        assertFalse(flush.running(), "flush still waits for w2; a later write does not hold it");
        p.get("w2").request.end();
        assertEquals(1, flush.resumed);
        flush.request.end();
        assertEquals(0, t.size());
    }

    /** One request of a table case: range {@code [first, end)} on {@code thread}; whether it must wait at begin. */
    private record Req(String name, Access access, long first, long end, int thread, boolean waits) {
        static Req runs(String name, Access access, long first, long end, int thread) {
            return new Req(name, access, first, end, thread, false);
        }

        static Req waits(String name, Access access, long first, long end, int thread) {
            return new Req(name, access, first, end, thread, true);
        }
    }

    /**
     * Requests begun in order on a list with {@code threads} threads: which start and which wait. Ending the first
     * (the holder) resumes every waiter exactly once.
     */
    private record Case(String rule, int threads, List<Req> requests) {
        @Override
        public String toString() {
            return rule;
        }
    }

    static Stream<Arguments> waitRules() {
        List<Case> cases = List.of(
                new Case("a write-zeroes waits for an overlapping earlier write", 2, List.of(
                        Req.runs("write", Access.WRITE, 10, 20, 0),
                        Req.waits("zeroes", Access.SERIALISING, 19, 30, 1))),
                new Case("a write and a read wait for an overlapping earlier write-zeroes; ranges are half-open", 2,
                        List.of(Req.runs("zeroes", Access.SERIALISING, 10, 20, 1),
                                Req.waits("write", Access.WRITE, 0, 11, 0),
                                Req.waits("read", Access.READ, 19, 25, 0),
                                Req.runs("apart [20,30) does not overlap [10,20)", Access.WRITE, 20, 30, 0))),
                new Case("non-overlapping serialising requests do not wait", 2, List.of(
                        Req.runs("a", Access.SERIALISING, 0, 10, 0),
                        Req.runs("b", Access.WRITE, 10, 20, 1),
                        Req.runs("c", Access.SERIALISING, 20, 30, 1),
                        Req.runs("d", Access.READ, 30, 40, 0))),
                new Case("overlapping reads and writes without serialising requests do not wait", 1, List.of(
                        Req.runs("a", Access.WRITE, 0, 10, 0),
                        Req.runs("b", Access.WRITE, 0, 10, 0),
                        Req.runs("c", Access.READ, 0, 10, 0))));
        return Arrays.stream(TrackedLockKind.values())
                .flatMap(kind -> cases.stream().map(c -> Arguments.of(kind, c)));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("waitRules")
    void whoWaitsForWhom(TrackedLockKind kind, Case c) {
        Map<String, Probe> p = beginAll(new TrackedRequests(kind, c.threads()), c.requests().toArray(new Req[0]));
        p.get(c.requests().get(0).name()).request.end();
        for (Req r : c.requests().subList(1, c.requests().size())) {
            assertEquals(r.waits() ? 1 : 0, p.get(r.name()).resumed, r.name() + " resumed when the first ended");
        }
    }

    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void aChainOfDependenciesResumesInOrderExactlyOnce(TrackedLockKind kind) {
        TrackedRequests t = new TrackedRequests(kind, 3);
        Map<String, Probe> p = beginAll(t, Req.runs("w", Access.WRITE, 0, 8, 0),
                Req.waits("z", Access.SERIALISING, 0, 8, 1), Req.waits("w2", Access.WRITE, 4, 12, 2),
                Req.waits("f", Access.FLUSH, 0, 0, 0));
        Probe w = p.get("w");
        Probe z = p.get("z");
        Probe w2 = p.get("w2");
        Probe f = p.get("f");
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
