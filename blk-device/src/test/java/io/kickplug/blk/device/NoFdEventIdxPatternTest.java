package io.kickplug.blk.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DeviceActivation;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DeviceSignals;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.FileBackend;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.blk.fake.GatedBackend;
import io.kickplug.blk.testkit.ImageFiles;
import io.kickplug.virtio.iothread.EventLoopThread;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.SplitDeviceQueue;
import io.kickplug.virtio.queue.SplitDriverQueue;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13's lost request, at the device layer: a Linux poll queue (no interrupt at all, the driver polls the
 * used ring and leaves {@code used_event} at 0), EVENT_IDX negotiated, a file backend whose calls run on the
 * worker pool. Per try the driver publishes three 512-byte writes, polls until all three are used, waits a
 * random short while (so its next publication lands anywhere around the I/O thread going to sleep after the
 * completions), publishes a fourth write and kicks only when {@code avail_event} asks for it (VIRTIO 1.2
 * section 2.7.10), then polls for it. Meanwhile another thread restarts the device the way the vhost-user
 * backend does when the front-end changes its rings: reset (waits for the requests in flight), read the
 * queue's indices, activate a new view that continues from them.
 *
 * <p>Two losses this caught: a reset that saved the used index before the last completion's used-ring push
 * (the request was counted out of flight before it was pushed, so the new view wrote over its entry), and,
 * at the vhost-user layer, a kick dropped between activation and the publication of the running set
 * ({@code VhostUserPatternTest}). Tries: {@code -Dkickplug.pattern.tries} (default 100,000).
 */
class NoFdEventIdxPatternTest {

    private static final int TRIES = Integer.getInteger("kickplug.pattern.tries", 100_000);
    private static final int QUEUE_SIZE = 64;
    private static final long FEATURES = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_FLUSH;
    private static final long DATA = 1 << 20;
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    @TempDir
    Path dir;
    private IoThread ioThread;
    private VirtioBlkDevice device;
    private FileBackend backend;

    @AfterEach
    void tearDown() throws Exception {
        DirectRingDriver.stop(device, ioThread);
        if (backend != null) {
            backend.close();
        }
    }

    /** Starts {@link #device} on {@code storage}: one queue on its own I/O thread, two workers, a mutex lock. */
    private void start(String name, BlockBackend storage) {
        ioThread = new EventLoopThread("pattern-io");
        device = new VirtioBlkDevice(BlkDeviceSpec.of(name, storage, false, 1, QUEUE_SIZE,
                name.getBytes(StandardCharsets.US_ASCII), List.of(ioThread))
                .withMapping(QueueMapping.of(List.of(), 1, 1)).withTrackedLock(TrackedLockKind.MUTEX).withWorkers(2));
    }

    /** Activates the device on one queue that continues at the given indices; returns the view. */
    private static DeviceQueue activate(VirtioBlkDevice device, GuestMemory memory, QueueLayout layout,
            DeviceSignals signals, int nextAvail, int nextUsed) {
        SplitDeviceQueue view = new SplitDeviceQueue(memory, 0, layout, FEATURES);
        view.setIndices(nextAvail, nextUsed);
        device.activate(new DeviceActivation(FEATURES, memory, List.of(view), signals));
        return view;
    }

    @Test
    void aRequestPublishedAroundTheDevicesSleepIsAlwaysCompleted() throws Exception {
        backend = ImageFiles.openSparse(dir.resolve("disk.img"), 1 << 20);
        start("pattern", backend);
        GuestMemory memory = OffHeapGuestMemory.allocate(4 << 20);
        QueueLayout layout = QueueLayout.contiguous(QUEUE_SIZE, 0);
        SplitDriverQueue driver = new SplitDriverQueue(memory, layout, FEATURES, -1, 0);
        // A Linux poll queue: callbacks off, and used_event is never written: it stays 0.
        driver.disableCallbacks();
        memory.writeU16(usedEvent(layout), (short) 0);
        // No call descriptor (NOFD): a due notification goes nowhere, the signals only count it.
        DirectRingDriver.Signals signals = new DirectRingDriver.Signals();
        AtomicReference<DeviceQueue> view = new AtomicReference<>(activate(device, memory, layout, signals, 0, 0));

        AtomicLong tries = new AtomicLong();
        AtomicLong restarts = new AtomicLong();
        AtomicReference<Throwable> restartFailure = new AtomicReference<>();
        Thread restarter = new Thread(() -> {
            SplittableRandom random = new SplittableRandom(13);
            long seen = -1;
            try {
                while (!Thread.currentThread().isInterrupted() && tries.get() < TRIES) {
                    // At most one restart per try, at a random moment within it.
                    long now = tries.get();
                    if (now == seen) {
                        Thread.yield(); // not a spin: on a busy machine the device's threads need the CPU
                        continue;
                    }
                    seen = now;
                    spin(random.nextInt(4_000));
                    device.reset();
                    DeviceQueue old = view.get();
                    // The reset returned: every request taken is in the used ring, so the view's used index
                    // is the ring's (what the vhost-user backend saves for the next start).
                    int ringUsed = memory.readU16Acquire(usedIdx(layout)) & 0xffff;
                    assertEquals(ringUsed, old.nextUsed(), "used index saved by a reset vs the ring's");
                    view.set(activate(device, memory, layout, signals, old.nextAvail(), old.nextUsed()));
                    restarts.incrementAndGet();
                }
            } catch (Throwable t) {
                restartFailure.compareAndSet(null, t);
            }
        }, "pattern-restarter");
        restarter.setDaemon(true);
        boolean restarting = TRIES > 0;
        if (restarting) {
            restarter.start();
        }

        SplittableRandom random = new SplittableRandom(42);
        try {
            for (int t = 0; t < TRIES; t++) {
                for (int s = 0; s < 3; s++) {
                    publishWrite(memory, driver, s, t);
                }
                for (int s = 0; s < 3; s++) {
                    awaitUsed(driver, memory, layout, signals, restartFailure, t, "write " + s);
                }
                // Land the next publication anywhere around the I/O thread's sleep after the completions.
                spin(random.nextInt(2_000));
                publishWrite(memory, driver, 3, t);
                awaitUsed(driver, memory, layout, signals, restartFailure, t, "the fourth write");
                tries.incrementAndGet();
            }
        } finally {
            restarter.interrupt();
            restarter.join(TimeUnit.SECONDS.toMillis(30));
        }
        if (restartFailure.get() != null) {
            throw new AssertionError("restarter failed after " + restarts.get() + " restarts",
                    restartFailure.get());
        }
        assertNull(signals.fault.get(), "no device error");
        assertEquals(4L * TRIES, device.stats().requestsCompleted());
        System.out.printf("NoFdEventIdxPatternTest: %d tries, %d restarts, %d notifications due (no descriptor)%n",
                TRIES, restarts.get(), signals.interrupts.get());
    }

    // Split ring field addresses (VIRTIO 1.2 sections 2.7.6 and 2.7.8).
    private static long availIdx(QueueLayout l) {
        return l.availRing() + 2;
    }

    private static long usedEvent(QueueLayout l) {
        return l.availRing() + 4 + 2L * l.size();
    }

    private static long usedIdx(QueueLayout l) {
        return l.usedRing() + 2;
    }

    private static long availEvent(QueueLayout l) {
        return l.usedRing() + 4 + 8L * l.size();
    }

    private static void spin(int n) {
        for (int i = 0; i < n; i++) {
            Thread.onSpinWait();
        }
    }

    /** Publishes a 512-byte write in slot {@code slot}; kicks only when avail_event asks (2.7.10). */
    private void publishWrite(GuestMemory memory, SplitDriverQueue driver, int slot, int tryNumber) {
        long base = DATA + slot * 4096L;
        memory.writeU32(base, VirtioBlk.T_OUT);
        memory.writeU32(base + 4, 0);
        memory.writeU64(base + 8, slot);
        memory.writeU8(base + 16, (byte) 0xff);
        memory.fill(base + 512, 512, (byte) tryNumber);
        boolean added = driver.add(List.of(BufferSpec.readable(base, VirtioBlk.HEADER_SIZE),
                BufferSpec.readable(base + 512, 512), BufferSpec.writable(base + 16, 1)), false, slot);
        if (!added) {
            throw new AssertionError("queue full");
        }
        if (driver.kickPrepare()) {
            device.queueNotify(0);
        }
    }

    private void awaitUsed(SplitDriverQueue driver, GuestMemory memory, QueueLayout layout,
            DirectRingDriver.Signals signals,
            AtomicReference<Throwable> restartFailure, int tryNumber, String what) {
        long deadline = System.nanoTime() + TIMEOUT_NS;
        UsedBuffer u;
        while ((u = driver.getUsed()) == null) {
            if (System.nanoTime() - deadline > 0 || restartFailure.get() != null) {
                AssertionError e = new AssertionError(String.format(
                        "try %d: %s never completed: avail.idx %d, avail_event %d, used.idx %d; %s; fault %s", tryNumber,
                        what, memory.readU16(availIdx(layout)) & 0xffff,
                        memory.readU16(availEvent(layout)) & 0xffff,
                        memory.readU16(usedIdx(layout)) & 0xffff, device.queueCounters().get(0),
                        signals.fault.get()));
                if (restartFailure.get() != null) {
                    e.initCause(restartFailure.get());
                }
                throw e;
            }
            // Poll like a poll queue, but give the CPU away: with more runnable threads than cores a spinning
            // driver would slow the I/O thread and the workers it waits for.
            Thread.yield();
        }
        int slot = (Integer) u.token();
        assertEquals(VirtioBlk.S_OK, memory.readU8(DATA + slot * 4096L + 16), "status of slot " + slot);
    }

    /**
     * The first loss, made deterministic: a reset (section 2.4) must not return while a completed request is not
     * yet in the used ring. The request's backend call is held on a worker until the reset has passed its I/O
     * thread barrier; then the used-ring push is held. Before the fix the reset returned here (the request had
     * left the in-flight count before its push) and the saved used index was one short.
     */
    @Test
    void aResetWaitsForTheUsedRingPushOfACompletedRequest() throws Exception {
        GatedBackend gated = new GatedBackend(new MemoryBackend(1 << 20, false));
        start("reset", gated);
        GuestMemory memory = OffHeapGuestMemory.allocate(4 << 20);
        QueueLayout layout = QueueLayout.contiguous(QUEUE_SIZE, 0);
        SplitDriverQueue driver = new SplitDriverQueue(memory, layout, FEATURES, -1, 0);
        CountDownLatch pushing = new CountDownLatch(1);
        CountDownLatch letPush = new CountDownLatch(1);
        SplitDeviceQueue real = new SplitDeviceQueue(memory, 0, layout, FEATURES);
        DeviceQueue held = new DeviceQueue() {
            @Override public int index() { return real.index(); }
            @Override public int size() { return real.size(); }
            @Override public boolean eventIdx() { return real.eventIdx(); }
            @Override public DescriptorChain pop() { return real.pop(); }
            @Override public boolean hasAvailable() { return real.hasAvailable(); }
            @Override public boolean needsNotification() { return real.needsNotification(); }
            @Override public void disableNotification() { real.disableNotification(); }
            @Override public boolean enableNotification() { return real.enableNotification(); }
            @Override public int nextAvail() { return real.nextAvail(); }
            @Override public int nextUsed() { return real.nextUsed(); }
            @Override public boolean isBroken() { return real.isBroken(); }

            @Override
            public void pushUsed(int head, int writtenBytes) {
                pushing.countDown();
                try {
                    letPush.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                real.pushUsed(head, writtenBytes);
            }
        };
        // No call descriptor (NOFD): a due notification goes nowhere, the signals only count it.
        DirectRingDriver.Signals signals = new DirectRingDriver.Signals();
        device.activate(new DeviceActivation(FEATURES, memory, List.of(held), signals));
        gated.close(0);
        publishWrite(memory, driver, 0, 1);
        gated.awaitEntered(1); // on a worker, held
        Thread[] resetter = new Thread[1];
        CompletableFuture<Void> reset = CompletableFuture.runAsync(() -> {
            resetter[0] = Thread.currentThread();
            device.reset();
        });
        // The reset queued its I/O thread barrier once it waits; a task queued after it runs after it.
        long deadline = System.nanoTime() + TIMEOUT_NS;
        while (resetter[0] == null || resetter[0].getState() != Thread.State.TIMED_WAITING) {
            assertTrue(System.nanoTime() - deadline < 0, "the reset should wait for the request");
            Thread.yield();
        }
        CountDownLatch afterBarrier = new CountDownLatch(1);
        ioThread.execute(afterBarrier::countDown);
        assertTrue(afterBarrier.await(10, TimeUnit.SECONDS));
        assertFalse(reset.isDone(), "the reset waits for the request on the worker");
        gated.open(0);
        assertTrue(pushing.await(10, TimeUnit.SECONDS), "the completion reached the used-ring push");
        // The push is held: a reset that returns now would save used index 0 with an entry still to come.
        for (int i = 0; i < 1_000 && !reset.isDone(); i++) {
            Thread.yield();
        }
        boolean returnedEarly = reset.isDone();
        letPush.countDown();
        reset.get(10, TimeUnit.SECONDS);
        assertFalse(returnedEarly, "the reset returned before the completed request was in the used ring");
        assertEquals(1, real.nextUsed(), "the request is in the used ring after the reset");
        device.close();
        device = null;
    }
}
