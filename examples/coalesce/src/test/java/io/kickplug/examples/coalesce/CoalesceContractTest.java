package io.kickplug.examples.coalesce;

import io.kickplug.sdk.testkit.StrategyContract;
import io.kickplug.sdk.testkit.StrategyContractTest;
import java.time.Duration;

/**
 * The kit's contract for a notification strategy: no lost and no duplicate notification under random batch
 * shapes, EVENT_IDX on and off, detached anywhere; fio verify through the real device; swaps to and from it. With
 * a low threshold so that the tests coalesce: a notification is held at most max_delay_us (1 ms) plus the timer's
 * lateness, declared as 5 ms.
 */
class CoalesceContractTest extends StrategyContractTest {

    @Override
    protected StrategyContract contract() {
        CoalesceSettings eager = new CoalesceSettings(200, 1_000, 1_000);
        return StrategyContract.of(CoalescingNotifier.NAME, () -> new CoalescingNotifier(eager))
                .maxDelay(Duration.ofMillis(5));
    }
}
