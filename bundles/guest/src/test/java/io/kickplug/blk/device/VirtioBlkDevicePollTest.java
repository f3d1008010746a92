package io.kickplug.blk.device;

import static io.kickplug.virtio.testkit.Await.await;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollPolicy;
import io.kickplug.api.poll.PollStatus;
import io.kickplug.api.poll.PollWindow;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.virtio.iothread.EventLoopThread;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Device-side polling through the real MMIO transport and split rings: the I/O thread turns the driver's
 * notifications off while it polls (VIRTIO 1.2 section 2.7.10) and on before it blocks, and no request that
 * arrives during a switch, or while the poll policy goes away, waits for a notification that never comes.
 */
class VirtioBlkDevicePollTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final long ALL = -1L;
    private static final int USED_F_NO_NOTIFY = 1;

    @RegisterExtension
    final DeviceRig rig = new DeviceRig();
    private RawRingGuest guest;
    private long header;
    private long data;
    private long status;

    /** A policy whose windows are always {@code ns} long. */
    private static PollPolicy fixed(long ns) {
        return params -> new PollWindow() {
            @Override
            public long pollNs() {
                return ns;
            }

            @Override
            public void update(long blockNs) {
            }
        };
    }

    /** A policy whose windows are 0..maxNs at random: the loop switches between polling and blocking often. */
    private static PollPolicy random() {
        return params -> new PollWindow() {
            @Override
            public long pollNs() {
                return ThreadLocalRandom.current().nextLong(params.maxNs() + 1);
            }

            @Override
            public void update(long blockNs) {
            }
        };
    }

    private void start(long features) {
        rig.threads.add(new EventLoopThread("poll-io"));
        rig.device(BlkDeviceSpec.of("poll", new MemoryBackend(1 << 20, false), false, 1, 256,
                "poll".getBytes(StandardCharsets.US_ASCII), rig.threads));
        guest = rig.guest(4 << 20, features, 1, 256);
        header = guest.header(VirtioBlk.T_IN, 8);
        data = guest.alloc(4096, 4096);
        status = guest.alloc(1, 1);
    }

    /** One 4 KiB read with buffers reused, waited for on the interrupt line. */
    private void read(int i) throws InterruptedException {
        guest.memory().writeU8(status, (byte) 0xEE);
        Object token = Integer.valueOf(i);
        guest.submit(0, List.of(BufferSpec.readable(header, VirtioBlk.HEADER_SIZE), BufferSpec.writable(data, 4096),
                BufferSpec.writable(status, 1)), false, token);
        UsedBuffer used = guest.awaitUsed(0, TIMEOUT);
        assertSame(token, used.token(), "request " + i);
        assertEquals(VirtioBlk.S_OK, guest.memory().readU8(status));
    }

    private int usedFlags() {
        return guest.memory().readU16(guest.queue(0).layout().usedRing()) & 0xFFFF;
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    /**
     * Section 2.7.10.2: without EVENT_IDX, used.flags NO_NOTIFY is set while polling, cleared after.
     *
     * <p>A drain sets NO_NOTIFY too (between its disableNotification and its re-enable, and the guest may see
     * the completion in between), so seeing the flag does not prove the I/O thread polls, and a request the guest
     * publishes then may be found by the drain's re-check instead of a poll: that was this test's flake (no hit,
     * hits=0 misses=0 pollNanos=0). The test therefore submits until a request is found by polling; a hit is
     * tallied before the request's completion is pushed, so it is visible once the guest sees the completion.
     * Windows are longer than the test, so poll mode ends only when polling stops.
     */
    @Test
    void pollingSetsNoNotifyAndStoppingClearsIt() throws Exception {
        start(ALL & ~VirtioFeatures.RING_EVENT_IDX);
        rig.device.setPollPolicy(fixed(TimeUnit.MINUTES.toNanos(10)));
        read(0);
        PollStatus on = rig.device.setPolling(true, null);
        assertTrue(on.active());
        int i = 1;
        while (rig.device.pollStatus().queues().get(0).hits() == 0) {
            // Almost always the first or second: only a request racing a drain's tail is not a poll hit.
            assertTrue(i <= 100, "no request was found by polling in 100: " + rig.device.pollStatus());
            read(i++);
        }
        await(() -> usedFlags() == USED_F_NO_NOTIFY, "NO_NOTIFY while the I/O thread polls");
        rig.device.setPolling(false, null);
        await(() -> usedFlags() == 0, "notifications on again after polling stopped");
        long hits = rig.device.pollStatus().queues().get(0).hits();
        read(i);
        // The read's own drain sets NO_NOTIFY for a moment; afterwards the flag stays clear.
        await(() -> usedFlags() == 0, "notifications on after a request served without polling");
        assertEquals(hits, rig.device.pollStatus().queues().get(0).hits(), "no poll hit once polling stopped");
    }

    /**
     * Whether the device asks the driver not to notify its next buffer (section 2.7.10): with EVENT_IDX, avail_event
     * is not the index of the entry the driver publishes next; without it, used.flags NO_NOTIFY.
     */
    private boolean notificationsOff(boolean eventIdx) {
        if (!eventIdx) {
            return usedFlags() == USED_F_NO_NOTIFY;
        }
        int size = guest.queue(0).layout().size();
        int availIdx = guest.memory().readU16(guest.queue(0).layout().availRing() + 2) & 0xFFFF;
        int availEvent = guest.memory().readU16(guest.queue(0).layout().usedRing() + 4 + 8L * size) & 0xFFFF;
        return availEvent != availIdx;
    }

    private long kicks() {
        return rig.device.queueCounters().get(0).availNotifications();
    }

    /**
     * Section 2.7.10: a request the guest adds while the I/O thread polls is found by polling, with no kick. With
     * EVENT_IDX the device's pollBegin left avail_event at the driver's next entry (where the drain's re-enable put
     * it), so the guest kicked every request, and the kick marked the queue ready before a poll could see the entry:
     * a poll hit needed the poll to read avail.idx in the moment between the guest's store and its kick, so on a
     * loaded machine, where the two threads seldom run at once, there were none
     * (requestsRacingTheSwitchBetweenPollingAndNotificationsAreNeverLost[eventIdx=true]: hits=0 misses=15198).
     * Here the windows are longer than the test: the I/O thread polls from the first window to the end.
     */
    @ParameterizedTest(name = "eventIdx={0}")
    @ValueSource(booleans = {false, true})
    void aRequestAddedWhileTheDevicePollsIsFoundByPollingWithoutAKick(boolean eventIdx) throws Exception {
        start(eventIdx ? ALL : ALL & ~VirtioFeatures.RING_EVENT_IDX);
        AtomicLong windows = new AtomicLong();
        rig.device.setPollPolicy(params -> new PollWindow() {
            @Override
            public long pollNs() {
                windows.incrementAndGet();
                return TimeUnit.MINUTES.toNanos(10);
            }

            @Override
            public void update(long blockNs) {
            }
        });
        read(0); // kicked: polling is off
        // The drain turns notifications off while it takes the ring, and on again before the I/O thread sleeps.
        await(() -> !notificationsOff(eventIdx), "notifications on after a drain without polling");
        rig.device.setPolling(true, null);
        // The first window begins after that drain, and no drain follows until the guest adds: what asks the driver
        // for no notification now is the window's pollBegin.
        await(() -> windows.get() > 0 && notificationsOff(eventIdx),
                "the driver asked for no notification while the I/O thread polls (section 2.7.10)");
        for (int i = 1; i <= 50; i++) {
            // Each window ends in a hit, and the next begins once the drain of that hit is over: a request the
            // guest adds before then is taken by the drain (no kick either), so wait for the window.
            await(() -> windows.get() > rig.device.pollStatus().queues().get(0).hits(), "the next poll window");
            long kicks = kicks();
            read(i);
            assertEquals(kicks, kicks(), "request " + i + " added while the device polls was kicked: "
                    + rig.device.pollStatus());
            assertEquals(i, rig.device.pollStatus().queues().get(0).hits(), "request " + i + " found by polling");
        }
        assertEquals(0, rig.device.pollStatus().queues().get(0).misses(), "no window ran out");
    }

    @ParameterizedTest(name = "eventIdx={0}")
    @ValueSource(booleans = {false, true})
    void requestsRacingTheSwitchBetweenPollingAndNotificationsAreNeverLost(boolean eventIdx, TestReporter reporter)
            throws Exception {
        start(eventIdx ? ALL : ALL & ~VirtioFeatures.RING_EVENT_IDX);
        rig.device.setPollPolicy(random());
        // Windows of 0..100 us against gaps of 0..100 us after the guest saw the previous completion: adds
        // land inside windows, after them, and right on their ends, where notifications are re-enabled.
        rig.device.setPolling(true, PollParams.defaults().withMaxNs(100_000));
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < 20_000; i++) {
            spin(random.nextLong(100_000));
            read(i);
        }
        PollStatus s = rig.device.pollStatus();
        // A window ends in a hit, a miss, or a kick (neither; kicks in windows were the EVENT_IDX bug of
        // aRequestAddedWhileTheDevicePollsIsFoundByPollingWithoutAKick); a drain's tail takes some requests.
        String seen = s + ", kicks " + kicks();
        reporter.publishEntry("poll", seen); // in the test report: how far from the edge a passing run was
        assertTrue(s.queues().get(0).hits() > 0, "some requests were found by polling: " + seen);
        assertTrue(s.queues().get(0).misses() > 0, "some windows expired: " + seen);
        assertEquals(20_000, rig.device.stats().requestsCompleted());
    }

    /**
     * The poll policy is bound and unbound while the guest reads. The swapper checks that each change took
     * effect before the next one: after binding, the I/O thread polled with the policy (it asked it for a
     * window); after unbinding, requests were served without it. The switcher's failures fail the test.
     */
    @Test
    void thePolicyComingAndGoingUnderLoadLosesNothing() throws Exception {
        start(ALL & ~VirtioFeatures.RING_EVENT_IDX);
        rig.device.setPolling(true, null);
        AtomicLong windows = new AtomicLong();
        PollPolicy policy = params -> new PollWindow() {
            @Override
            public long pollNs() {
                windows.incrementAndGet();
                return 20_000;
            }

            @Override
            public void update(long blockNs) {
            }
        };
        int cycles = 40;
        AtomicInteger swaps = new AtomicInteger();
        CompletableFuture<Void> swapper = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                for (int i = 0; i < cycles; i++) {
                    long polled = windows.get();
                    rig.device.setPollPolicy(policy);
                    assertTrue(rig.device.pollStatus().active(), "polling active with a policy bound");
                    await(() -> windows.get() > polled, "a poll window from the bound policy");
                    spin(ThreadLocalRandom.current().nextLong(30_000));
                    long served = rig.device.stats().requestsCompleted();
                    rig.device.setPollPolicy(null);
                    assertFalse(rig.device.pollStatus().active(), "polling inactive with no policy bound");
                    await(() -> rig.device.stats().requestsCompleted() > served + 1, "requests served without a policy");
                    spin(ThreadLocalRandom.current().nextLong(30_000));
                    swaps.addAndGet(2);
                }
                swapper.complete(null);
            } catch (Throwable e) {
                swapper.completeExceptionally(e);
            }
        }, "poll-policy-swapper");
        t.start();
        int reads = 0;
        long deadline = System.nanoTime() + 6 * TIMEOUT.toNanos();
        try {
            while ((reads < 2_000 || !swapper.isDone()) && System.nanoTime() - deadline < 0) {
                read(reads++);
            }
        } finally {
            t.join(TIMEOUT.toMillis() + 10_000);
        }
        swapper.get(1, TimeUnit.SECONDS); // rethrows what the swapper met
        assertEquals(2 * cycles, swaps.get(), "binds and unbinds that took effect");
        rig.device.setPollPolicy(null);
        assertFalse(rig.device.pollStatus().active());
        assertTrue(rig.device.pollStatus().requested(), "the request is kept for when a policy returns");
        await(() -> usedFlags() == 0, "notifications on once no policy is bound");
        read(reads);
        assertEquals(reads + 1L, rig.device.stats().requestsCompleted());
        assertEquals(0, rig.device.stats().requestsInFlight());
    }

    @Test
    void pollCountersSurviveAReset() throws Exception {
        start(ALL);
        rig.device.setPollPolicy(fixed(TimeUnit.MILLISECONDS.toNanos(50)));
        rig.device.setPolling(true, null);
        read(0);
        read(1);
        await(() -> rig.device.pollStatus().queues().get(0).pollNanos() > 0, "some poll time");
        long before = rig.device.pollStatus().queues().get(0).pollNanos();
        guest.reset();
        assertTrue(rig.device.pollStatus().queues().get(0).pollNanos() >= before);
    }
}
