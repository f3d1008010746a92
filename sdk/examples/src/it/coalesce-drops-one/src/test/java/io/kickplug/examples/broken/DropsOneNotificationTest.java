package io.kickplug.examples.broken;

import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.examples.coalesce.CoalesceSettings;
import io.kickplug.examples.coalesce.CoalescingNotifier;
import io.kickplug.sdk.testkit.StrategyContract;
import java.time.Duration;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** The coalesce strategy with the decision of every 50th batch dropped, under the kit's protocol contract. */
class DropsOneNotificationTest {

    /** Forwards to the real coalesce strategy, but one batch end in 50 never reaches it. */
    static final class DropsOne implements CompletionNotifier {
        private final CoalescingNotifier coalesce;
        private int ends;

        DropsOne(CoalescingNotifier coalesce) {
            this.coalesce = coalesce;
        }

        @Override
        public void begin(Queue queue) {
            coalesce.begin(queue);
        }

        @Override
        public void usedBufferPushed(Queue queue) {
            coalesce.usedBufferPushed(queue);
        }

        @Override
        public void end(Queue queue) {
            if (++ends % 50 != 0) {
                coalesce.end(queue);
            }
        }

        @Override
        public void detach(Queue queue) {
            coalesce.detach(queue);
        }
    }

    private static final StrategyContract CONTRACT = StrategyContract.of(CoalescingNotifier.NAME,
            () -> new DropsOne(new CoalescingNotifier(new CoalesceSettings(200, 1_000, 1_000))))
            .maxDelay(Duration.ofMillis(5));

    @Provide
    Arbitrary<StrategyContract.Script> scripts() {
        return StrategyContract.scripts();
    }

    @Property(tries = 300)
    void noLostAndNoDuplicateNotification(@ForAll("scripts") StrategyContract.Script script) {
        CONTRACT.checkProtocol(script);
    }
}
