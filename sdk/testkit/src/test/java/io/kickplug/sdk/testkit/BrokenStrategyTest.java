package io.kickplug.sdk.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.batching.DeferCallNotifier;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Strategies that break a rule fail the kit's contract with a message naming the rule and its VIRTIO section, and a
 * correct one passes the same scripts.
 */
class BrokenStrategyTest {

    /** Decides at the end of every batch but every seventh: that batch's buffers wait for the next decision. */
    static final class DropsOneNotification implements CompletionNotifier {
        private int ends;

        @Override
        public void end(Queue queue) {
            if (++ends % 7 != 0) {
                queue.notifyIfNeeded();
            }
        }

    }

    /** Decides at the end of every batch but every 50th. */
    static final class DropsEveryFiftieth implements CompletionNotifier {
        private int ends;

        @Override
        public void end(Queue queue) {
            if (++ends % 50 != 0) {
                queue.notifyIfNeeded();
            }
        }
    }

    /** Decides on another thread. */
    static final class DecidesOffThread implements CompletionNotifier {
        private static final ExecutorService OTHER = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "off-thread");
            t.setDaemon(true);
            return t;
        });

        @Override
        public void end(Queue queue) {
            try {
                OTHER.submit(queue::notifyIfNeeded).get();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Decides 1 ms after a batch from a timer, and forgets to cancel the timer on detach. */
    static final class IgnoresDetach implements CompletionNotifier {
        private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "ignores-detach-timer");
            t.setDaemon(true);
            return t;
        });

        @Override
        public void end(Queue queue) {
            TIMER.schedule(() -> queue.ioThread().execute(queue::notifyIfNeeded), 1, TimeUnit.MILLISECONDS);
        }

        @Override
        public void detach(Queue queue) {
            queue.notifyIfNeeded();
        }
    }

    private static ContractViolation failure(StrategyContract contract) {
        for (long seed = 1; seed <= 200; seed++) {
            try {
                contract.checkProtocol(StrategyContract.script(seed));
            } catch (ContractViolation v) {
                return v;
            }
        }
        throw new AssertionError("no script of 200 caught " + contract.name());
    }

    @Test
    void aStrategyThatDropsOneNotificationFailsNamingTheRuleAndSection() {
        ContractViolation v = failure(StrategyContract.of("drops-one", DropsOneNotification::new));
        assertEquals(Rule.NO_LOST_NOTIFICATION, v.rule());
        assertTrue(v.getMessage().contains("NO_LOST_NOTIFICATION"), v.getMessage());
        assertTrue(v.getMessage().contains("VIRTIO 1.2 section 2.7.7.2"), v.getMessage());
        assertTrue(v.getMessage().contains("without a decision"), v.getMessage());
    }

    @Test
    void aStrategyThatDecidesOffTheIoThreadFails() {
        assertEquals(Rule.QUEUE_ON_IO_THREAD, failure(StrategyContract.of("off-thread", DecidesOffThread::new)).rule());
    }

    @Test
    void aStrategyThatKeepsDecidingAfterDetachFails() {
        assertEquals(Rule.NO_CALL_AFTER_DETACH, failure(StrategyContract.of("ignores-detach", IgnoresDetach::new)
                .maxDelay(Duration.ofMillis(5))).rule());
    }

    @Test
    void theSameScriptsPassACorrectStrategy() {
        StrategyContract contract = StrategyContract.of(DeferCallNotifier.NAME, DeferCallNotifier::new);
        for (long seed = 1; seed <= 200; seed++) {
            contract.checkProtocol(StrategyContract.script(seed));
        }
    }

    @Test
    void aStrategyThatDropsNotificationsFailsUnderFioToo() {
        StrategyContract contract = StrategyContract.of("drops-some", DropsEveryFiftieth::new);
        ContractViolation v = assertThrows(ContractViolation.class, () -> contract.checkUnderFio(false, 5));
        assertEquals(Rule.EVERY_REQUEST_COMPLETES, v.rule());
    }
}
