package io.kickplug.examples.coalesce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** SPDK vhost's coalescing rule (lib/vhost/vhost.c, session_vq_io_stats_update), on a clock the test turns. */
class CoalescingStateTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    /** 100 us base, 10,000 IOPS: 100 completions per 10 ms interval. */
    private final CoalesceSettings settings = new CoalesceSettings(100, 10_000, 1_000);
    private final CoalescingState state = new CoalescingState();

    private void complete(int n) {
        for (int i = 0; i < n; i++) {
            state.completed();
        }
    }

    @Test
    void atOrBelowTheThresholdEveryBatchNotifiesAtOnce() {
        assertEquals(CoalescingState.NOW, state.decide(0, settings));
        complete(100); // exactly the threshold in the interval
        assertEquals(CoalescingState.NOW, state.decide(10 * MS, settings));
        assertEquals(0, state.irqDelayNs());
        assertEquals(CoalescingState.NOW, state.decide(10 * MS + 1, settings));
    }

    @Test
    void aboveTheThresholdTheDelayGrowsWithTheRateAndHoldsNotifications() {
        state.decide(0, settings);
        complete(300); // 3x the threshold: delay = 100 us * (300 - 100) / 100 = 200 us
        long t = 10 * MS;
        assertEquals(CoalescingState.NOW, state.decide(t, settings), "the first after the update goes out");
        assertEquals(TimeUnit.MICROSECONDS.toNanos(200), state.irqDelayNs());
        assertEquals(t + TimeUnit.MICROSECONDS.toNanos(200), state.decide(t + 1000, settings), "held");
        assertEquals(CoalescingState.NOW, state.decide(t + TimeUnit.MICROSECONDS.toNanos(200), settings));
    }

    @Test
    void theDelayIsCappedAndDropsWhenTheRateFalls() {
        state.decide(0, settings);
        complete(100_000);
        state.decide(10 * MS, settings);
        assertEquals(TimeUnit.MICROSECONDS.toNanos(1_000), state.irqDelayNs(), "max_delay_us");
        complete(10);
        state.decide(20 * MS, settings);
        assertEquals(0, state.irqDelayNs());
    }

    @Test
    void delayBaseZeroTurnsCoalescingOff() {
        CoalesceSettings off = settings.with(Map.of("delay_base_us", "0"));
        state.decide(0, off);
        complete(100_000);
        assertEquals(CoalescingState.NOW, state.decide(10 * MS, off));
        assertEquals(0, state.irqDelayNs());
    }

    @Test
    void settingsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> settings.with(Map.of("iops_threshold", "50")));
        assertThrows(IllegalArgumentException.class, () -> settings.with(Map.of("delay", "5")));
        assertEquals(new CoalesceSettings(80, 10_000, 1_000), settings.with(Map.of("delay_base_us", "80")));
    }
}
