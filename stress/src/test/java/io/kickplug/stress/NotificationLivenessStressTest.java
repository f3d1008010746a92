package io.kickplug.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.SplitDeviceQueue;
import io.kickplug.virtio.queue.SplitDriverQueue;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Both notification handshakes of the split ring (VIRTIO 1.2 sections 2.7.7 and 2.7.10) as a liveness test:
 * several rings at once, each with a driver thread and a device thread that only ever go to sleep the way the
 * spec allows (the device: drain, re-enable notifications, full fence, re-read avail.idx; the driver: reap,
 * re-enable callbacks, full fence, re-read used.idx) and only wake on the other side's notification (a kick or
 * an interrupt, sent only when the other's suppression field asks for it). Random spins between every step
 * shuffle the interleavings. A notification lost by either side leaves both asleep: the test fails with the
 * ring's state after 10 s without progress.
 *
 * <p>This is the harness of our own next to jcstress ({@link JcstressHandshakeTest}): jcstress checks one
 * handshake step exhaustively across memory-model outcomes; this one runs the whole protocol, both sides of
 * both handshakes, with queue wrap-around, batches and many threads. Requests per ring:
 * {@code -Dkickplug.handshake.requests} (default 50,000), rings: {@code -Dkickplug.handshake.rings} (4).
 */
class NotificationLivenessStressTest {

    private static final int REQUESTS = Integer.getInteger("kickplug.handshake.requests", 50_000);
    private static final int RINGS = Integer.getInteger("kickplug.handshake.rings", 4);
    private static final int SIZE = 8;
    private static final long STALL_NS = TimeUnit.SECONDS.toNanos(10);

    /** A sleeping side and the flag that wakes it: set, then unpark; the sleeper re-checks the flag. */
    private static final class Doorbell {
        final AtomicBoolean rung = new AtomicBoolean();
        volatile Thread sleeper;
        long rings;

        void ring() {
            rings++;
            rung.set(true);
            LockSupport.unpark(sleeper);
        }

        /** Sleeps until rung; false after {@link #STALL_NS} without a ring. */
        boolean await() {
            long deadline = System.nanoTime() + STALL_NS;
            while (!rung.getAndSet(false)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                LockSupport.parkNanos(this, left);
            }
            return true;
        }
    }

    private static final class Ring {
        final GuestMemory memory = OffHeapGuestMemory.allocate(64 << 10);
        final QueueLayout layout = QueueLayout.contiguous(SIZE, 0);
        final SplitDriverQueue driver;
        final SplitDeviceQueue device;
        final Doorbell kick = new Doorbell();
        final Doorbell interrupt = new Doorbell();
        volatile boolean done;

        Ring(long features) {
            driver = new SplitDriverQueue(memory, layout, features, -1, 0);
            device = new SplitDeviceQueue(memory, 0, layout, features);
        }

        String state() {
            return String.format("avail.idx %d, used.idx %d, avail_event %d, used_event %d, used.flags %d,"
                    + " avail.flags %d, driver in flight %d, device in flight %d, kicks %d, interrupts %d",
                    memory.readU16(layout.availRing() + 2) & 0xffff, memory.readU16(layout.usedRing() + 2) & 0xffff,
                    memory.readU16(layout.usedRing() + 4 + 8L * SIZE) & 0xffff,
                    memory.readU16(layout.availRing() + 4 + 2L * SIZE) & 0xffff, memory.readU16(layout.usedRing())
                            & 0xffff, memory.readU16(layout.availRing()) & 0xffff, driver.inFlight(),
                    (device.nextAvail() - device.nextUsed()) & 0xffff, kick.rings, interrupt.rings);
        }
    }

    private static void jitter(SplittableRandom random) {
        for (int i = random.nextInt(64); i > 0; i--) {
            Thread.onSpinWait();
        }
    }

    /** The driver: publishes REQUESTS chains in random batches, kicks when asked, reaps, sleeps as 2.7.7 allows. */
    private static void driver(Ring r, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        r.interrupt.sleeper = Thread.currentThread();
        int sent = 0;
        int reaped = 0;
        while (reaped < REQUESTS) {
            int batch = Math.min(1 + random.nextInt(SIZE), Math.min(REQUESTS - sent, r.driver.freeDescriptors()));
            for (int i = 0; i < batch; i++) {
                r.driver.add(List.of(BufferSpec.writable(4096 + 64L * (sent % SIZE), 8)), false, sent);
                sent++;
                jitter(random);
            }
            // Section 2.7.13.4: publish, full fence, read avail_event / used.flags (in kickPrepare).
            if (batch > 0 && r.driver.kickPrepare()) {
                r.kick.ring();
            }
            jitter(random);
            while (r.driver.getUsed() != null) {
                reaped++;
            }
            if (reaped == REQUESTS || (r.driver.freeDescriptors() > 0 && sent < REQUESTS)) {
                continue;
            }
            // Nothing to do but wait for used buffers: re-enable callbacks, full fence, re-check used.idx.
            jitter(random);
            if (r.driver.enableCallbacks()) {
                if (!r.interrupt.await()) {
                    throw new AssertionError("driver asleep for 10 s: lost interrupt? " + r.state());
                }
            }
            r.driver.disableCallbacks();
        }
        r.done = true;
        r.kick.ring();
    }

    /** The device: drains, uses each chain, interrupts when asked, sleeps as 2.7.10 allows. */
    private static void device(Ring r, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        r.kick.sleeper = Thread.currentThread();
        List<DescriptorChain> taken = new ArrayList<>();
        while (!r.done) {
            r.device.disableNotification();
            DescriptorChain c;
            while ((c = r.device.pop()) != null) {
                taken.add(c);
                jitter(random);
            }
            // Complete in a random order, sometimes deciding per push, sometimes per batch.
            while (!taken.isEmpty()) {
                c = taken.remove(random.nextInt(taken.size()));
                r.device.pushUsed(c.head(), 0);
                jitter(random);
                if ((taken.isEmpty() || random.nextBoolean()) && r.device.needsNotification()) {
                    r.interrupt.ring();
                }
            }
            jitter(random);
            // Going to sleep: publish avail_event / clear NO_NOTIFY, full fence, re-read avail.idx.
            if (!r.device.enableNotification() && !r.done) {
                if (!r.kick.await() && !r.done) {
                    throw new AssertionError("device asleep for 10 s: lost kick? " + r.state());
                }
            }
        }
    }

    @ParameterizedTest(name = "EVENT_IDX {0}")
    @ValueSource(booleans = {true, false})
    void noNotificationIsLostOnEitherSide(boolean eventIdx) throws Exception {
        long features = VirtioFeatures.VERSION_1 | (eventIdx ? VirtioFeatures.RING_EVENT_IDX : 0);
        List<Ring> rings = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int i = 0; i < RINGS; i++) {
            Ring r = new Ring(features);
            rings.add(r);
            long seed = 1000L * i + (eventIdx ? 1 : 0);
            threads.add(new Thread(() -> run(() -> driver(r, seed), failure, r), "driver-" + i));
            threads.add(new Thread(() -> run(() -> device(r, seed + 7), failure, r), "device-" + i));
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join(TimeUnit.MINUTES.toMillis(10));
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get().getMessage(), failure.get());
        }
        for (Ring r : rings) {
            assertEquals(0, r.driver.inFlight(), r.state());
            assertEquals(REQUESTS & 0xffff, r.memory.readU16(r.layout.usedRing() + 2) & 0xffff,
                    "used entries: " + r.state());
        }
    }

    private static void run(Runnable body, AtomicReference<Throwable> failure, Ring r) {
        try {
            body.run();
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
            r.done = true;
            r.kick.ring();
            r.interrupt.ring();
        }
    }
}
