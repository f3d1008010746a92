package io.kickplug.blk.device;

import static io.kickplug.virtio.testkit.Await.await;
import static io.kickplug.api.virtio.BufferSpec.readable;
import static io.kickplug.api.virtio.BufferSpec.writable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.blk.notify.NotifierRegistry;
import io.kickplug.virtio.iothread.EventLoopThread;
import io.kickplug.api.transport.MmioRegisters;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The device's completion path with the built-in {@code immediate} strategy and strategy switches, through
 * virtio-mmio and real split rings: one decision per completion, subject to the ring's suppression (VIRTIO
 * 1.2 section 2.7.7.2), and a fallback that leaves no used buffer without its decision.
 */
class CompletionNotifierDeviceTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final long ALL = -1L;

    @RegisterExtension
    final DeviceRig rig = new DeviceRig();
    private final NotifierRegistry notifiers = new NotifierRegistry();
    private RawRingGuest guest;

    private void start(long features) {
        rig.threads.add(new EventLoopThread("notify-io"));
        rig.device(BlkDeviceSpec.of("n", new MemoryBackend(1 << 20, false), false, 1, 256,
                new byte[0], rig.threads).withMapping(QueueMapping.of(List.of(), 1, 1))
                .withTrackedLock(TrackedLockKind.MUTEX).withWorkers(1).withNotifiers(notifiers));
        notifiers.addListener(rig.device::strategiesChanged);
        guest = rig.guest(8 << 20, features, 1, 64);
    }

    /** Adds {@code n} 4 KiB writes to queue 0 without notifying the rig.device. */
    private void addWrites(int n) {
        for (int i = 0; i < n; i++) {
            List<BufferSpec> chain = List.of(readable(guest.header(VirtioBlk.T_OUT, 8L * i), VirtioBlk.HEADER_SIZE),
                    readable(guest.alloc(4096, 16), 4096), writable(guest.alloc(1, 1), 1));
            assertTrue(guest.queue(0).add(chain, false, "w" + i));
        }
    }

    private void kick() {
        rig.transport.port().mmio().write(MmioRegisters.QUEUE_NOTIFY, 4, 0);
    }

    private QueueCounters counters() {
        return rig.device.queueCounters().get(0);
    }

    private void awaitCompleted(long requests) {
        await(() -> counters().requests() == requests && counters().inFlight() == 0
                && counters().interruptsSent() + counters().interruptsSuppressed() == requests
                && counters().batches() > 0, // a batch is counted when it closes, after its decisions
                requests + " completions, their decisions and a closed batch");
    }

    // 2.7.7.2 without EVENT_IDX: with VIRTQ_AVAIL_F_NO_INTERRUPT clear, every completion is notified.
    @Test
    void immediateSendsOneInterruptPerCompletion() {
        start(ALL & ~VirtioFeatures.RING_EVENT_IDX);
        addWrites(8);
        kick();
        awaitCompleted(8);
        QueueCounters c = counters();
        assertEquals(CompletionNotifier.IMMEDIATE, c.strategy());
        assertEquals(8, c.interruptsSent());
        assertEquals(0, c.interruptsSuppressed());
        assertEquals(8 * 4096, c.bytes());
        assertEquals(1, c.availNotifications());
        assertEquals(c.batches(), c.batchHistogram().stream().mapToLong(Long::longValue).sum());
    }

    // 2.7.7.2 without EVENT_IDX: VIRTQ_AVAIL_F_NO_INTERRUPT set, so the device sends nothing.
    @Test
    void immediateHonoursNoInterrupt() throws Exception {
        start(ALL & ~VirtioFeatures.RING_EVENT_IDX);
        guest.queue(0).disableCallbacks();
        addWrites(8);
        kick();
        awaitCompleted(8);
        assertEquals(0, counters().interruptsSent());
        assertEquals(8, counters().interruptsSuppressed());
        assertEquals(0, guest.interruptStatus());
        for (int i = 0; i < 8; i++) {
            assertTrue(guest.queue(0).getUsed() != null, "used buffer " + i);
        }
        assertTrue(guest.queue(0).enableCallbacks());
        addWrites(1);
        kick();
        UsedBuffer used = guest.awaitUsed(0, TIMEOUT);
        assertEquals("w0", used.token());
        awaitCompleted(9);
        assertEquals(1, counters().interruptsSent());
    }

    // 2.7.7.2 with EVENT_IDX: used_event 6 ahead of the driver, so of 8 completions only the one that moves
    // the used index past it is notified.
    @Test
    void immediateHonoursUsedEventAhead() {
        start(ALL);
        assertTrue((guest.features() & VirtioFeatures.RING_EVENT_IDX) != 0);
        // A first request, so the device's notification state is valid (its first decision always notifies).
        addWrites(1);
        kick();
        awaitCompleted(1);
        assertTrue(guest.queue(0).getUsed() != null);
        assertEquals(1, counters().interruptsSent());

        addWrites(8);
        guest.queue(0).enableCallbacksDelayed(); // used_event = last_used 1 + 3/4 of 8 = 7
        kick();
        awaitCompleted(9);
        assertEquals(2, counters().interruptsSent());
        assertEquals(7, counters().interruptsSuppressed());
    }

    /**
     * A strategy that never decides on its own: everything it holds is owed at detach. Its detach runs
     * {@code onDetach} once, on the I/O thread, in the middle of the switch that leaves it.
     */
    private static final class Hold implements CompletionNotifier {
        final AtomicInteger detached = new AtomicInteger();
        volatile Runnable onDetach;

        @Override
        public void end(Queue queue) {
        }

        @Override
        public void detach(Queue queue) {
            detached.incrementAndGet();
            Runnable hook = onDetach;
            onDetach = null;
            if (hook != null) {
                hook.run();
            }
            CompletionNotifier.super.detach(queue);
        }
    }

    @Test
    void removedStrategyFallsBackAndOwedInterruptIsSent() throws Exception {
        start(ALL & ~VirtioFeatures.RING_EVENT_IDX);
        Hold hold = new Hold();
        notifiers.add("hold", hold, 0, 1);
        rig.device.setStrategy("hold", -1).forEach(latch -> awaitLatch(latch));
        assertEquals("hold", counters().strategy());
        assertEquals(1, counters().switches());

        addWrites(4);
        kick();
        await(() -> counters().requests() == 4 && counters().inFlight() == 0, "4 completions");
        assertEquals(0, counters().interruptsSent() + counters().interruptsSuppressed());
        assertEquals(0, guest.interruptStatus());

        notifiers.remove(hold); // returns once the queue has left the strategy
        assertEquals(1, hold.detached.get());
        assertEquals(CompletionNotifier.IMMEDIATE, counters().strategy());
        assertEquals("hold", counters().configured());
        assertEquals(2, counters().switches());
        assertEquals(1, counters().interruptsSent()); // one decision for the four it held
        for (int i = 0; i < 4; i++) {
            assertTrue(guest.awaitUsed(0, TIMEOUT) != null);
        }

        notifiers.add("hold", hold, 0, 2); // the configured strategy returns: the queue switches back
        await(() -> counters().strategy().equals("hold"), "switch back to hold");
        assertEquals(3, counters().switches());
    }

    /** Decides per used buffer without sending (defer-call's half inside a section); sends at the end if told. */
    private static final class DecideNow implements CompletionNotifier {
        private final boolean sendAtEnd;
        /** Every other decision through notifyIfNeeded, which sends at once. */
        private final boolean alternate;
        private int pushed;

        DecideNow(boolean sendAtEnd) {
            this(sendAtEnd, false);
        }

        DecideNow(boolean sendAtEnd, boolean alternate) {
            this.sendAtEnd = sendAtEnd;
            this.alternate = alternate;
        }

        @Override
        public void usedBufferPushed(Queue queue) {
            if (alternate && pushed++ % 2 == 1) {
                queue.notifyIfNeeded();
            } else {
                queue.notificationWanted();
            }
        }

        @Override
        public void end(Queue queue) {
            if (sendAtEnd) {
                queue.sendNotification();
            }
        }
    }

    // 2.7.7.2 without EVENT_IDX, NO_INTERRUPT clear: every decision wants a notification; those of one batch
    // owe one, sent at its end; the others count as suppressed, so sent plus suppressed is the decisions.
    @Test
    void decisionsPerBufferOweOneNotificationPerBatch() throws Exception {
        start(ALL & ~VirtioFeatures.RING_EVENT_IDX);
        notifiers.add("per-buffer", new DecideNow(true), 0, 1);
        rig.device.setStrategy("per-buffer", -1).forEach(latch -> awaitLatch(latch));
        addWrites(8);
        kick();
        awaitCompleted(8);
        QueueCounters c = counters();
        assertTrue(c.batches() >= 1 && c.batches() <= 8, "batches " + c.batches());
        assertEquals(c.batches(), c.interruptsSent(), "one notification per batch");
        assertEquals(8 - c.batches(), c.interruptsSuppressed());
        for (int i = 0; i < 8; i++) {
            assertTrue(guest.awaitUsed(0, TIMEOUT) != null, "used buffer " + i);
        }
    }

    // 2.7.7.2 without EVENT_IDX, NO_INTERRUPT clear: every decision wants a notification. A notifyIfNeeded
    // decision that finds one owed sends that one for both, and the other counts as suppressed: sent plus
    // suppressed is the number of decisions, however a strategy mixes the two calls.
    @Test
    void anImmediateDecisionAfterADeferredOneSendsOnceAndCountsBoth() throws Exception {
        start(ALL & ~VirtioFeatures.RING_EVENT_IDX);
        notifiers.add("alternate", new DecideNow(true, true), 0, 1);
        rig.device.setStrategy("alternate", -1).forEach(latch -> awaitLatch(latch));
        addWrites(8);
        kick();
        awaitCompleted(8); // sent + suppressed == 8
        QueueCounters c = counters();
        assertTrue(c.interruptsSent() >= 4 && c.interruptsSent() <= 8, "sent " + c.interruptsSent());
        for (int i = 0; i < 8; i++) {
            assertTrue(guest.awaitUsed(0, TIMEOUT) != null, "used buffer " + i);
        }
    }

    // The contract: an owed notification is sent when the strategy leaves, however long it was owed.
    @Test
    void anOwedNotificationIsSentWhenItsStrategyLeaves() throws Exception {
        start(ALL & ~VirtioFeatures.RING_EVENT_IDX);
        DecideNow neverSends = new DecideNow(false);
        notifiers.add("owes", neverSends, 0, 1);
        rig.device.setStrategy("owes", -1).forEach(latch -> awaitLatch(latch));
        addWrites(4);
        kick();
        // the first decision owes the notification, the three after it are covered by it
        await(() -> counters().requests() == 4 && counters().inFlight() == 0
                && counters().interruptsSuppressed() == 3, "4 completions and their decisions");
        assertEquals(0, counters().interruptsSent());
        assertEquals(0, guest.interruptStatus());

        notifiers.remove(neverSends); // returns once the queue has left the strategy
        assertEquals(1, counters().interruptsSent());
        assertEquals(3, counters().interruptsSuppressed());
        assertTrue(guest.interruptStatus() != 0, "the owed interrupt reached the driver");
    }

    // A caller's switch is answered only by a resolution that read its configured name: one asked for while
    // another switch of the queue is resolving waits for the next (SwapUnderLoadTest's "did not switch in
    // time", a switch right after a strategy service was re-added, answered with the strategy it left).
    @Test
    void aSwitchAskedForDuringAnotherIsAnsweredByItsOwnResolution() throws Exception {
        start(ALL & ~VirtioFeatures.RING_EVENT_IDX);
        Hold first = new Hold();
        Hold second = new Hold();
        notifiers.add("first", first, 0, 1);
        notifiers.add("second", second, 0, 2);
        rig.device.setStrategy("first", -1).forEach(latch -> awaitLatch(latch));
        assertEquals("first", counters().strategy());

        List<java.util.concurrent.CountDownLatch> late = new java.util.concurrent.CopyOnWriteArrayList<>();
        long[] lateCountWhenLeavingSecond = {-1};
        // On the I/O thread, inside the switch to "second" (after it read the configured name): another caller
        // configures "immediate" and asks for its switch, from its own thread.
        first.onDetach = () -> {
            Thread caller = new Thread(() -> late.addAll(rig.device.setStrategy(CompletionNotifier.IMMEDIATE, 0)));
            caller.start();
            try {
                caller.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        };
        // The late caller's own resolution leaves "second": it must still be waiting then.
        second.onDetach = () -> lateCountWhenLeavingSecond[0] = late.get(0).getCount();
        rig.device.setStrategy("second", 0).forEach(latch -> awaitLatch(latch));
        assertEquals(1, late.size());
        awaitLatch(late.get(0));
        assertEquals(1, lateCountWhenLeavingSecond[0],
                "the late caller was answered by the switch that read the configuration before it asked");
        assertEquals(CompletionNotifier.IMMEDIATE, counters().strategy());
        assertEquals(3, counters().switches());
    }

    @Test
    void strategyConfiguredBeforeActivationAndBadNames() {
        start(ALL);
        assertThrows(DiskException.class, () -> rig.device.setStrategy("Bad Name", -1));
        assertThrows(IllegalArgumentException.class, () -> rig.device.setStrategy("bh", 1));
        rig.device.setStrategy("not-bound", 0);
        await(() -> counters().configured().equals("not-bound"), "configuration");
        assertEquals(CompletionNotifier.IMMEDIATE, counters().strategy());
        assertEquals(0, counters().switches());
        assertNull(notifiers.resolve("not-bound"));
    }

    private static void awaitLatch(java.util.concurrent.CountDownLatch latch) {
        try {
            assertTrue(latch.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
