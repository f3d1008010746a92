package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A control-socket client that connects the moment a daemon is ready waits for the bundles the daemon starts
 * after ready (LazyStart): BackendCrashIT's {@code felix:update io.kickplug.blk} once failed with "Cannot coerce
 * update(Token)" because gogo.command's functions were there before gogo.shell's converters.
 */
class GogoStatementsGateTest {

    @Test
    void aSessionOpensOnlyOnceTheLaterBundlesHaveStarted() throws Exception {
        CountDownLatch laterStarted = new CountDownLatch(1);
        // No framework: once past the gate, opening the Gogo session fails at once, which shows it went on.
        GogoStatements statements = new GogoStatements(null, List.of(), laterStarted);
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        CountDownLatch returned = new CountDownLatch(1);
        Thread client = new Thread(() -> {
            try {
                statements.open();
            } catch (Throwable t) {
                outcome.set(t);
            } finally {
                returned.countDown();
            }
        }, "control-client");
        client.start();
        // The condition: the client is parked on the gate (not finished, not running).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (client.getState() != Thread.State.TIMED_WAITING && returned.getCount() > 0
                && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertTrue(returned.getCount() > 0, "open() returned before the later bundles started: " + outcome.get());
        assertTrue(client.getState() == Thread.State.TIMED_WAITING, "the client waits on the gate");
        laterStarted.countDown();
        assertTrue(returned.await(10, TimeUnit.SECONDS), "open() goes on once the gate opens");
        assertNotNull(outcome.get(), "without a framework the session cannot open: it went past the gate");
        assertFalse(client.isAlive() && returned.getCount() > 0);
    }
}
