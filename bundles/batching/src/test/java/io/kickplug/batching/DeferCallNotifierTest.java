package io.kickplug.batching;

import io.kickplug.virtio.testkit.InlineIoThread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** defer-call (seed 002): one decision per queue per outermost section, none inside. */
class DeferCallNotifierTest {

    private final InlineIoThread loop = InlineIoThread.manual();
    private final DeferCallNotifier deferCall = new DeferCallNotifier();

    @Test
    void oneInterruptForABatchOfN() {
        FakeQueue q = new FakeQueue(0, loop);
        deferCall.begin(q);
        for (int i = 0; i < 64; i++) {
            q.push(deferCall);
            assertEquals(0, q.decisions.size(), "decided inside the section after " + (i + 1));
        }
        deferCall.end(q);
        assertEquals(1, q.sent);
        assertEquals(List.of(64), q.covered);
        assertEquals(0, deferCall.depth());
    }

    @Test
    void sectionsNestPerThreadAndTheOutermostEndDecidesForEveryQueueOnce() {
        FakeQueue a = new FakeQueue(0, loop);
        FakeQueue b = new FakeQueue(1, loop);
        deferCall.begin(a);
        deferCall.begin(b);
        for (int i = 0; i < 3; i++) {
            a.push(deferCall);
            b.push(deferCall);
        }
        deferCall.end(a);
        assertEquals(0, a.decisions.size() + b.decisions.size());
        deferCall.end(b);
        assertEquals(List.of(3), a.covered);
        assertEquals(List.of(3), b.covered);
    }

    @Test
    void outsideASectionTheDecisionIsImmediate() {
        FakeQueue q = new FakeQueue(0, loop);
        q.push(deferCall);
        q.push(deferCall);
        assertEquals(List.of(1, 1), q.covered);
    }

    @Test
    void aSuppressedDecisionSendsNothing() {
        FakeQueue q = new FakeQueue(0, loop);
        q.suppress = true;
        q.batch(deferCall, 8);
        assertEquals(1, q.decisions.size());
        assertEquals(0, q.sent);
    }

    @Test
    void detachInsideAnotherQueuesSectionDecidesNowAndOnlyOnce() {
        FakeQueue a = new FakeQueue(0, loop);
        FakeQueue b = new FakeQueue(1, loop);
        deferCall.begin(a);
        deferCall.begin(b);
        a.push(deferCall);
        b.push(deferCall);
        deferCall.end(a);
        deferCall.detach(a); // a's batch is closed: a safe point for a, while b's section is open
        assertEquals(List.of(1), a.covered);
        deferCall.end(b);
        assertEquals(List.of(1), a.covered);
        assertEquals(List.of(1), b.covered);
    }

    @Test
    void endWithoutBeginIsRefused() {
        FakeQueue q = new FakeQueue(0, loop);
        assertThrows(IllegalStateException.class, () -> deferCall.end(q));
    }

    @Test
    void sectionsOfOtherThreadsDoNotDefer() throws Exception {
        FakeQueue q = new FakeQueue(0, loop);
        FakeQueue other = new FakeQueue(1, loop);
        deferCall.begin(q);
        Thread t = new Thread(() -> other.push(deferCall));
        t.start();
        t.join();
        assertEquals(List.of(1), other.covered);
        deferCall.end(q);
    }
}
