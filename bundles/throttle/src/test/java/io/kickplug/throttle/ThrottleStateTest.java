package io.kickplug.throttle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** QEMU's throttling algorithm on a fake clock (docs/throttle.txt): averages, bursts, read/write split, rules. */
class ThrottleStateTest {

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final ThrottleState state = new ThrottleState(now::get);

    /**
     * A guest that always has a request ready, under {@code limits} (the state configured with them first): admitted
     * at once, or after the wait the state asks for.
     */
    private long[] admittedPerSecond(Map<String, String> limits, int seconds, boolean write, long bytes) {
        state.configure(ThrottleLimits.NONE.with(limits));
        long[] perSecond = new long[seconds];
        long start = now.get();
        long end = start + seconds * 1_000_000_000L;
        while (now.get() < end) {
            long wait = state.admit(write, bytes);
            if (wait == 0) {
                perSecond[(int) ((now.get() - start) / 1_000_000_000L)]++;
            } else {
                now.addAndGet(wait);
            }
        }
        return perSecond;
    }

    private static long sum(long[] a, int from, int to) {
        long s = 0;
        for (int i = from; i < to; i++) {
            s += a[i];
        }
        return s;
    }

    @Test
    void anAverageWithoutBurstHoldsAfterABurstOfATenthOfASecond() {
        long[] s = admittedPerSecond(Map.of("iops", "1000"), 10, false, 4096);
        // The bucket holds avg/10 = 100 requests before it throttles (100 ms at the rate), then 1000 per second.
        assertEquals(1101, s[0], 1, "first second: the 100-request bucket plus one second at the rate");
        long total = sum(s, 0, 10);
        assertTrue(Math.abs(total - 10_100) <= 10, "10 s at 1000 IOPS plus the initial bucket: " + total);
        for (int i = 1; i < 10; i++) {
            assertEquals(1000, s[i], 1, "second " + i);
        }
    }

    // docs/throttle.txt: with iops-total-max and -max-length the guest may run at max for length seconds, then avg.
    @Test
    void aBurstRunsAtMaxForItsLengthThenTheAverageHolds() {
        long[] s = admittedPerSecond(Map.of("iops", "100", "iops-max", "1000", "iops-max-length", "2"), 12, true, 4096);
        // Burst: bucket size max * length = 2000 requests, at no more than max per second (burst level of max/10).
        assertTrue(s[0] >= 990 && s[0] <= 1110, "first second at the burst rate: " + s[0]);
        long burst = sum(s, 0, 3);
        assertTrue(burst >= 2000 && burst <= 2300, "the burst is about max * length: " + burst);
        for (int i = 4; i < 12; i++) {
            assertEquals(100, s[i], 2, "after the burst the average holds, second " + i);
        }
    }

    @Test
    void bytesPerSecondCountBytes() {
        long[] s = admittedPerSecond(Map.of("bps", "1048576"), 6, false, 65536);
        for (int i = 1; i < 6; i++) {
            assertEquals(16, s[i], 1, "1 MiB/s is 16 requests of 64 KiB per second, second " + i);
        }
    }

    @Test
    void readAndWriteLimitsAreSeparate() {
        long[] reads = admittedPerSecond(Map.of("iops-read", "10"), 3, false, 512);
        assertEquals(10, reads[2], 1);
        int writes = 0;
        for (int i = 0; i < 10_000; i++) {
            if (state.admit(true, 512) == 0) {
                writes++;
            }
        }
        assertEquals(10_000, writes, "writes are not limited by iops-read");
    }

    @Test
    void configureTakesEffectAtOnceAndClears() {
        state.configure(ThrottleLimits.NONE.with(Map.of("iops", "10")));
        int admitted = 0;
        while (state.admit(false, 512) == 0) {
            admitted++;
        }
        assertEquals(2, admitted, "a bucket of avg/10 = 1 request, then throttled (the clock stands still)");
        state.configure(ThrottleLimits.NONE);
        assertEquals(0, state.admit(false, 512), "no limit: admitted at once");
    }

    @Test
    void qemuRulesAreChecked() {
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> ThrottleLimits.NONE.with(Map.of("iops", "10", "iops-read", "5"))).getMessage()
                .contains("cannot be used at the same time"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> ThrottleLimits.NONE.with(Map.of("bps", "100", "bps-max", "50"))).getMessage()
                .contains("cannot be lower"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> ThrottleLimits.NONE.with(Map.of("iops-write-max", "50"))).getMessage().contains("needs"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> ThrottleLimits.NONE.with(Map.of("iops", "10", "iops-max-length", "3"))).getMessage()
                .contains("-max-length needs"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> ThrottleLimits.NONE.with(Map.of("iopz", "10"))).getMessage().contains("unknown limit"));
    }
}
