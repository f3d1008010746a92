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

/** The arithmetic of QEMU's adjust_polling_time (util/aio-posix.c), step by step. */
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
                assertEquals(0, w.pollNs());
            }
        }
    }
}
