package io.kickplug.poll;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.poll.PollParams;
import java.util.List;
import java.util.stream.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The arithmetic of QEMU's adjust_polling_time (util/aio-posix.c), step by step, and the probe out of the zero window. */
class AdaptivePollWindowTest {

    private static AdaptivePollWindow window(long maxNs, long grow, long shrink) {
        return new AdaptivePollWindow(new PollParams(maxNs, grow, shrink));
    }

    /** Applies each wait and returns the window after each. */
    private static long[] run(AdaptivePollWindow w, long... blockNs) {
        long[] after = new long[blockNs.length];
        for (int i = 0; i < blockNs.length; i++) {
            w.update(blockNs[i]);
            after[i] = w.pollNs();
        }
        return after;
    }

    @Test
    void defaultsStartAt4usDoubleUpTo32768AndResetToZero() {
        AdaptivePollWindow w = window(32768, 0, 0);
        assertEquals(0, w.pollNs(), "no polling before a wait was seen");
        assertArrayEquals(new long[] {4000, 4000, 8000, 16000, 32000, 32768, 32768, 0},
                run(w, 1000, 3999, 5000, 9000, 17000, 32100, 32768, 32769));
    }

    @Test
    void aWaitWithinTheWindowIsTheSweetSpot() {
        AdaptivePollWindow w = window(32768, 0, 0);
        run(w, 10, 4001, 8001); // 4000, 8000, 16000
        assertEquals(16000, w.pollNs());
        assertArrayEquals(new long[] {16000, 16000, 16000}, run(w, 0, 15999, 16000));
    }

    @Test
    void aWaitOfExactlyMaxNsNeitherGrowsNorShrinks() {
        AdaptivePollWindow w = window(32768, 0, 0);
        run(w, 1);
        assertEquals(4000, w.pollNs());
        // QEMU grows only when block_ns < poll_max_ns and shrinks only when block_ns > poll_max_ns.
        assertArrayEquals(new long[] {4000}, run(w, 32768));
    }

    /** From a fresh window of {@code params}: the window after each wait. */
    @ParameterizedTest(name = "{0}")
    @MethodSource
    void fromAFreshWindow(String what, PollParams params, long[] blockNs, long[] expected) {
        assertArrayEquals(expected, run(new AdaptivePollWindow(params), blockNs), what);
    }

    static Stream<Arguments> fromAFreshWindow() {
        return Stream.of(
                Arguments.of("a long wait with a zero window stays at zero", new PollParams(32768, 0, 0),
                        new long[] {1_000_000, 32769}, new long[] {0, 0}),
                Arguments.of("grow uses its factor", new PollParams(100_000, 4, 0),
                        new long[] {1, 4001, 16001, 64001}, new long[] {4000, 16000, 64000, 100_000}),
                Arguments.of("the first window is capped by a small max", new PollParams(1000, 0, 0),
                        new long[] {500, 999}, new long[] {1000, 1000}),
                Arguments.of("max 0 never polls", new PollParams(0, 0, 0),
                        new long[] {0, 1, 1000}, new long[] {0, 0, 0}));
    }

    @Test
    void shrinkDividesInsteadOfResetting() {
        AdaptivePollWindow w = window(32768, 0, 2);
        run(w, 1, 4001, 8001); // 16000
        assertArrayEquals(new long[] {8000, 4000, 2000, 1000}, run(w, 40000, 40000, 40000, 40000));
    }

    @Test
    void thePolicyHandsOutIndependentWindows() {
        AdaptivePollPolicy policy = new AdaptivePollPolicy();
        var a = policy.newWindow(PollParams.defaults());
        var b = policy.newWindow(PollParams.defaults());
        a.update(100);
        assertEquals(4000, a.pollNs());
        assertEquals(0, b.pollNs());
    }

    @Test
    void paramsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> new PollParams(-1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new PollParams(PollParams.LIMIT_MAX_NS + 1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new PollParams(32768, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> new PollParams(32768, 0, 1));
    }

    /** The window never leaves [0, maxNs], and a wait past maxNs always leaves it at 0 with shrink 0. */
    @Property
    void staysWithinBounds(@ForAll @LongRange(min = 0, max = 200_000) long maxNs,
            @ForAll @Size(max = 50) List<@LongRange(min = 0, max = 400_000) Long> waits) {
        AdaptivePollWindow w = window(maxNs, 0, 0);
        for (long blockNs : waits) {
            long before = w.pollNs();
            w.update(blockNs);
            assertTrue(w.pollNs() >= 0 && w.pollNs() <= maxNs, w.toString());
            if (blockNs > maxNs && blockNs > before) {
                // 0, or a probe of maxNs after PROBE_AFTER such waits of a busy source in a row.
                assertTrue(w.pollNs() == 0 || w.pollNs() == maxNs && blockNs / AdaptivePollWindow.BUSY_FACTOR <= maxNs,
                        w.toString());
            }
        }
    }

    @Test
    void eightWaitsOverMaxWithAZeroWindowMakeTheNinthAProbeThatGrowsToWhatCaughtIt() {
        AdaptivePollWindow w = window(32768, 0, 0);
        long[] waits = new long[AdaptivePollWindow.PROBE_AFTER];
        java.util.Arrays.fill(waits, 40_000);
        long[] after = run(w, waits);
        for (int i = 0; i < after.length - 1; i++) {
            assertEquals(0, after[i], "wait " + i + ": QEMU's rule, the window stays 0");
        }
        assertEquals(32768, after[after.length - 1], "the next wait polls for poll-max-ns: " + w);
        // The probe caught the work after 9 us: the grow sequence 4000, 8000, 16000 covers it from 16000 on.
        assertArrayEquals(new long[] {16000, 16000}, run(w, 9000, 12000));
        assertEquals(1, w.probes());
        assertEquals(1, w.probeHits());
    }

    /**
     * What VhostBench's counters showed with polling on at QD32: the window swings between 0 and 4 us (a sleep of
     * 20 us grows it, the next miss and sleep of 40 us resets it) and never catches the work. QEMU's rule alone swings
     * for good; with the probe, the ninth wait polls for poll-max-ns.
     */
    @Test
    void aWindowSwingingBetweenZeroAnd4usProbesToo() {
        AdaptivePollWindow w = window(32768, 0, 0);
        long[] after = run(w, 20_000, 40_000, 20_000, 40_000, 20_000, 40_000, 20_000, 40_000);
        assertArrayEquals(new long[] {4000, 0, 4000, 0, 4000, 0, 4000, 32768}, after, w.toString());
        w.update(7000);
        assertEquals(8000, w.pollNs(), "the probe caught the work after 7 us");
    }

    @Test
    void aProbeThatMissesLeavesTheWindowAtZeroAndTheCountStartsAgain() {
        AdaptivePollWindow w = window(32768, 0, 0);
        for (int i = 0; i < AdaptivePollWindow.PROBE_AFTER; i++) {
            w.update(50_000);
        }
        assertEquals(32768, w.pollNs());
        w.update(60_000); // polled for 32768 ns, then slept: missed
        assertEquals(0, w.pollNs());
        for (int i = 0; i < AdaptivePollWindow.PROBE_AFTER - 1; i++) {
            w.update(50_000);
            assertEquals(0, w.pollNs(), "wait " + i + " after the missed probe");
        }
        w.update(50_000);
        assertEquals(32768, w.pollNs(), "the next probe, " + AdaptivePollWindow.PROBE_AFTER + " waits later");
        assertEquals(1, w.probes());
        assertEquals(0, w.probeHits());
    }

    @Test
    void anIdleSourceNeverProbes() {
        AdaptivePollWindow w = window(32768, 0, 0);
        for (int i = 0; i < 100; i++) {
            w.update(10_000_000); // 10 ms between requests: over 32 times poll-max-ns
            assertEquals(0, w.pollNs());
        }
        // A run of busy waits broken by an idle one starts counting again.
        for (int i = 0; i < AdaptivePollWindow.PROBE_AFTER - 1; i++) {
            w.update(40_000);
        }
        w.update(10_000_000);
        w.update(40_000);
        assertEquals(0, w.pollNs());
        assertEquals(0, w.probes());
    }

    /**
     * VhostBench's slow mode as a model, with the real window: a device queue at depth 32 against a front-end that
     * kicks once per batch. When the device runs out of work, the front-end's next request comes {@code R} later
     * (its wake-up on the device's interrupt); a device that polls that long takes it without a notification and
     * does not sleep; one that sleeps is kicked only at the end of the front-end's batch ({@code B} later) and wakes
     * {@code W} after the kick, so its wait is {@code R + B + W}, over poll-max-ns. QEMU's rule alone then keeps the
     * window at 0 for good: a sleep (one kick, one wake-up) per round. With the probe the device sleeps at most
     * {@link AdaptivePollWindow#PROBE_AFTER} times and then polls every round.
     */
    @Test
    void theTwoSidesSleepingInTurnEndAfterOneProbe() {
        long r = 10_000;
        long b = 13_000;
        long wake = 15_000;
        AdaptivePollWindow w = window(PollParams.DEFAULT_MAX_NS, 0, 0);
        int sleeps = 0;
        for (int round = 0; round < 10_000; round++) {
            long window = w.pollNs();
            if (window >= r) {
                w.update(r); // caught by polling: no kick, no wake-up
            } else {
                sleeps++;
                w.update(r + b + wake);
            }
        }
        assertTrue(sleeps <= AdaptivePollWindow.PROBE_AFTER, sleeps + " sleeps in 10,000 rounds; " + w);
        assertEquals(16000, w.pollNs(), w.toString());
    }
}
