package io.kickplug.batching;

import io.kickplug.virtio.testkit.InlineIoThread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * defer-call (seed 002): a decision per used buffer (QEMU's {@code virtio_should_notify()} per completion), the
 * notification it wants sent once per queue at the outermost section's end (the deferred irqfd write).
 */
class DeferCallNotifierTest {

    private final InlineIoThread loop = InlineIoThread.manual();
    private final DeferCallNotifier deferCall = new DeferCallNotifier();
    /** Queue 0, and queue 1 for the tests of two queues. */
    private final FakeQueue q = new FakeQueue(0, loop);
    private final FakeQueue other = new FakeQueue(1, loop);

    @Test
    void oneInterruptForABatchOfN() {
        deferCall.begin(q);
        for (int i = 0; i < 64; i++) {
            q.push(deferCall);
            assertEquals(i + 1, q.decisions.size(), "a decision per used buffer");
            assertEquals(0, q.sent, "sent inside the section after " + (i + 1));
        }
        deferCall.end(q);
        assertEquals(1, q.sent);
        assertEquals(64, q.covered.size());
        assertEquals(0, deferCall.depth());
    }

    // 2.7.7.2 with EVENT_IDX, decided per buffer: the driver polls the used ring during the batch and re-arms
    // used_event at what it consumed; the buffers pushed before its re-arm owe nothing, a later one that
    // crosses used_event does. One decision over the whole batch at its end would have notified for them.
    @Test
    void aDriverThatReArmsMidBatchGetsNoNotificationForWhatItAlreadyConsumed() {
        q.usedEvent = 0; // wants entry 0
        q.batch(deferCall, 1);
        assertEquals(1, q.sent);
        q.usedEvent = 0xffff; // callbacks off while it processes: used_event far behind

        deferCall.begin(q);
        for (int i = 0; i < 6; i++) {
            q.push(deferCall); // used index 2..7
        }
        q.usedEvent = 5; // consumed entries up to 4, re-armed for entry 5, which it already sees published
        q.push(deferCall); // used index 8: entry 7, used_event 5 is behind this decision's range [7, 8)
        deferCall.end(q);
        assertEquals(1, q.sent, "nothing owed: each decision's range missed used_event");

        deferCall.begin(q);
        q.usedEvent = 9; // wants entry 9
        q.push(deferCall); // entry 8
        assertFalse(q.owed());
        q.push(deferCall); // entry 9 crosses used_event
        assertTrue(q.owed());
        q.push(deferCall);
        deferCall.end(q);
        assertEquals(2, q.sent);
        assertFalse(q.owed());
    }

    @Test
    void theDeferredSendIsOnePerQueueHoweverManyDecisionsWantedIt() {
        deferCall.begin(q);
        deferCall.begin(q); // nested
        for (int i = 0; i < 5; i++) {
            q.push(deferCall);
        }
        deferCall.end(q);
        assertEquals(0, q.sent, "an inner end sends nothing");
        deferCall.end(q);
        assertEquals(1, q.sent);
        assertEquals(5, q.decisions.size());
    }

    @Test
    void sectionsNestPerThreadAndTheOutermostEndDecidesForEveryQueueOnce() {
        deferCall.begin(q);
        deferCall.begin(other);
        for (int i = 0; i < 3; i++) {
            q.push(deferCall);
            other.push(deferCall);
        }
        deferCall.end(q);
        assertEquals(0, q.sent + other.sent);
        deferCall.end(other);
        assertEquals(List.of(1, 1, 1), q.covered);
        assertEquals(List.of(1, 1, 1), other.covered);
        assertEquals(1, q.sent);
        assertEquals(1, other.sent);
    }

    @Test
    void outsideASectionTheDecisionIsImmediate() {
        q.push(deferCall);
        q.push(deferCall);
        assertEquals(List.of(1, 1), q.covered);
    }

    @Test
    void aSuppressedDecisionSendsNothing() {
        q.suppress = true;
        q.batch(deferCall, 8);
        assertEquals(8, q.decisions.size());
        assertEquals(0, q.sent);
    }

    @Test
    void detachInsideAnotherQueuesSectionDecidesNowAndOnlyOnce() {
        deferCall.begin(q);
        deferCall.begin(other);
        q.push(deferCall);
        other.push(deferCall);
        deferCall.end(q);
        assertEquals(0, q.sent);
        deferCall.detach(q); // q's batch is closed: a safe point for q, while other's section is open
        assertEquals(1, q.sent, "detach sends what q owes");
        assertEquals(List.of(1), q.covered);
        deferCall.end(other);
        assertEquals(1, q.sent, "and only once");
        assertEquals(List.of(1), q.covered);
        assertEquals(List.of(1), other.covered);
        assertEquals(1, other.sent);
    }

    @Test
    void endWithoutBeginIsRefused() {
        assertThrows(IllegalStateException.class, () -> deferCall.end(q));
    }

    @Test
    void sectionsOfOtherThreadsDoNotDefer() throws Exception {
        deferCall.begin(q);
        Thread t = new Thread(() -> other.push(deferCall));
        t.start();
        t.join();
        assertEquals(List.of(1), other.covered);
        deferCall.end(q);
    }
}
