package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendFilter;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.ForwardingAsyncBackend;
import io.kickplug.blk.backend.SyncBackends;
import io.kickplug.blk.testkit.RecordedIo;
import io.kickplug.virtio.testkit.Await;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * {@link BackendBindings}, {@link SwappableBackend} and {@link FilterChain} without OSGi: a backend factory's
 * service going and coming back (the NBD bundle stopped and started) and a filter's (the throttle bundle), with
 * requests in flight and arriving meanwhile. Nothing may be lost, completed twice or failed.
 */
class BackendBindingsTest {

    /**
     * An asynchronous backend that keeps what it is given until the test completes it; with
     * {@link #answersAtUnplug}, a backend that batches until unplug (NBD) whose server answers at once.
     */
    static final class HeldBackend implements AsyncBlockBackend {
        final ConcurrentLinkedQueue<BackendIo> submitted = new ConcurrentLinkedQueue<>();
        final AtomicInteger unplugs = new AtomicInteger();
        volatile boolean closed;
        volatile boolean answersAtUnplug;
        /** Runs in submit, before the request joins the batch. */
        volatile Runnable beforeSubmit;
        final long size;

        HeldBackend(long size) {
            this.size = size;
        }

        @Override
        public void submit(BackendIo io) {
            Runnable hook = beforeSubmit;
            if (hook != null) {
                beforeSubmit = null;
                hook.run();
            }
            if (closed) {
                io.complete(new IOException("closed"));
                return;
            }
            submitted.add(io);
        }

        @Override
        public void unplug() {
            unplugs.incrementAndGet();
            if (answersAtUnplug) {
                completeAll();
            }
        }

        /** Completes every request submitted so far; returns how many. */
        int completeAll() {
            int n = 0;
            for (BackendIo io; (io = submitted.poll()) != null; n++) {
                io.complete(null);
            }
            return n;
        }

        @Override
        public String kind() {
            return "held";
        }

        @Override
        public long size() {
            return size;
        }

        @Override
        public boolean readOnly() {
            return false;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    /** A factory of {@link HeldBackend}s that records what it opened. */
    static final class HeldFactory implements BackendFactory {
        final List<HeldBackend> opened = new CopyOnWriteArrayList<>();
        final List<BackendSpec> specs = new CopyOnWriteArrayList<>();
        final AtomicInteger failuresLeft = new AtomicInteger();
        long size = 1 << 20;
        String kind = "held";

        @Override
        public String kind() {
            return kind;
        }

        @Override
        public BlockBackend open(BackendSpec spec) throws IOException {
            specs.add(spec);
            if (failuresLeft.getAndDecrement() > 0) {
                throw new IOException("server down");
            }
            HeldBackend b = new HeldBackend(size);
            opened.add(b);
            return b;
        }
    }

    private static final BackendSpec SPEC = new BackendSpec("held", "nbd+unix:///d?socket=/x", 0, false);

    private final BackendBindings bindings = new BackendBindings();
    /** The "nbd" factory: disk n0's backend comes from it. */
    private final HeldFactory nbd = new HeldFactory();

    /** Disk n0 on a backend of {@link #nbd}, adopted by {@link #bindings} as the disk registry does. */
    private BlockBackend adoptNbdDisk() throws IOException {
        return bindings.adopt("n0", nbd.open(SPEC), nbd, SPEC);
    }

    /** Disk n0 and its device's chain, set by {@link #heldWhileTheFactoryIsGone}. */
    private BlockBackend disk;
    private AsyncBlockBackend chain;

    /** Adopts disk n0, takes its factory away and submits {@code n} requests, which must be held. */
    private List<RecordedIo> heldWhileTheFactoryIsGone(int n) throws IOException {
        disk = adoptNbdDisk();
        chain = deviceChain(bindings, "n0", disk);
        bindings.factoryGone(nbd);
        return submit(chain, n);
    }

    /** The backend as a disk's device reaches it: its view and its filter chain, as VirtioBlkDevice builds them. */
    private static AsyncBlockBackend deviceChain(BackendBindings b, String disk, BlockBackend backend) {
        UnaryOperator<AsyncBlockBackend> op = b.chainFor(disk);
        return op.apply(SyncBackends.async(backend, disk, 1));
    }

    private static RecordedIo io(BackendIo.Op op) {
        return new RecordedIo(op, 0, ByteBuffer.allocate(512));
    }

    private static boolean completedOk(RecordedIo io) {
        return io.completions.get() == 1 && io.error == null;
    }

    private static boolean failedOnce(RecordedIo io) {
        return io.completions.get() == 1 && io.error != null;
    }

    private static boolean pending(RecordedIo io) {
        return io.completions.get() == 0;
    }

    private static List<RecordedIo> submit(AsyncBlockBackend chain, int n) {
        List<RecordedIo> ios = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            RecordedIo io = io(i % 2 == 0 ? BackendIo.Op.WRITE : BackendIo.Op.READ);
            ios.add(io);
            chain.submit(io);
        }
        chain.unplug();
        return ios;
    }

    @Test
    void aGoneFactoryHoldsRequestsAndTheReturningOneGetsThemAfterReopeningTheSameSpec() throws Exception {
        BlockBackend disk = adoptNbdDisk();
        AsyncBlockBackend chain = deviceChain(bindings, "n0", disk);
        HeldBackend first = nbd.opened.get(0);

        List<RecordedIo> early = submit(chain, 4);
        assertEquals(4, first.submitted.size());

        // The bundle stops: the suspension waits for the 4 in flight, so complete them from another thread.
        Thread completer = new Thread(() -> {
            Await.await(() -> bindings.suspended("n0"), "the disk to hold its requests");
            first.completeAll();
        });
        completer.start();
        bindings.factoryGone(nbd);
        completer.join();
        assertTrue(early.stream().allMatch(BackendBindingsTest::completedOk), "requests in flight completed, not failed");
        assertTrue(first.closed, "the gone bundle's backend is closed");
        assertTrue(bindings.suspended("n0"));

        // Requests while the bundle is away are held: none completes, none fails.
        List<RecordedIo> held = submit(chain, 5);
        assertTrue(held.stream().allMatch(BackendBindingsTest::pending), "held, not failed");
        assertEquals(1, disk.size() >> 20, "the device still sees the disk's size");

        // A factory of the kind comes back (a new bundle version: another object); the first open fails once.
        HeldFactory again = new HeldFactory();
        again.failuresLeft.set(1);
        bindings.factoryArrived(again);
        Await.await(() -> again.opened.size() == 1, "the backend opened again");
        assertEquals(List.of(SPEC, SPEC), again.specs, "opened from the same spec (same URI), retried after a failure");
        HeldBackend second = again.opened.get(0);
        Await.await(() -> second.submitted.size() == 5, "the held requests sent to the new backend");
        assertFalse(bindings.suspended("n0"));
        assertEquals(5, second.completeAll());
        assertTrue(held.stream().allMatch(BackendBindingsTest::completedOk), "every held request completed once, without error");

        List<RecordedIo> late = submit(chain, 3);
        assertEquals(3, second.completeAll());
        assertTrue(late.stream().allMatch(BackendBindingsTest::completedOk));
        assertTrue(early.stream().allMatch(io -> io.completions.get() == 1), "nothing completed twice");
    }

    // RemoteBundlesSwapIT (flake hunt): the NBD bundle updated while the guest wrote, one request stuck in the old
    // backend's batch for the suspension's 30 s, then failed. The device handed it over just before the
    // suspension took the backend away and unplugged it, so it joined the batch after that unplug, and the
    // device's own unplug went to the (absent) next backend.
    @Test
    void aRequestThatJoinsTheBatchAfterTheSuspensionsUnplugIsStillSent() throws Exception {
        HeldBackend old = new HeldBackend(1 << 20);
        old.answersAtUnplug = true;
        SwappableBackend swappable = new SwappableBackend("n0", old);
        Thread suspender = new Thread(() -> swappable.suspend(60_000));
        old.beforeSubmit = () -> {
            suspender.start();
            Await.await(() -> old.unplugs.get() == 1, "the suspension's unplug");
        };
        RecordedIo io = io(BackendIo.Op.WRITE);
        swappable.submit(io);
        swappable.unplug(); // the device's end of batch reaches the current backend: none
        Await.await(() -> io.completions.get() == 1, "the request sent and answered");
        assertTrue(completedOk(io), "completed without error: " + io.error);
        suspender.join(10_000);
        assertFalse(suspender.isAlive(), "the suspension ended once nothing was in flight");
        assertTrue(old.closed);
        assertTrue(swappable.suspended());
    }

    @Test
    void aReopenedBackendOfAnotherSizeIsRefusedAndRequestsStayHeld() throws Exception {
        List<RecordedIo> held = heldWhileTheFactoryIsGone(2);
        HeldFactory other = new HeldFactory();
        other.size = 2 << 20;
        bindings.factoryArrived(other);
        Await.await(() -> other.opened.size() >= 2, "a few attempts");
        assertTrue(other.opened.get(0).closed, "the refused backend is closed");
        assertTrue(held.stream().allMatch(BackendBindingsTest::pending), "still held");
        // Detaching fails the held requests (the device resets first in real life) and stops the retries.
        disk.close();
        assertTrue(held.stream().allMatch(BackendBindingsTest::failedOnce));
        int attempts = other.specs.size();
        bindings.forget("n0");
        Await.await(() -> true, "");
        assertFalse(bindings.suspended("n0"));
        assertTrue(other.specs.size() <= attempts + 1, "retries end once the disk is gone");
    }

    @Test
    void aFactoryOfAnotherKindOrASynchronousBackendIsLeftAlone() throws Exception {
        BlockBackend disk = adoptNbdDisk();
        HeldFactory other = new HeldFactory();
        bindings.factoryGone(other);
        assertFalse(bindings.suspended("n0"), "another factory's departure does not touch the disk");
        BlockBackend sync = new io.kickplug.blk.backend.MemoryBackendFactory().open(
                new BackendSpec("memory", null, 1 << 20, false));
        assertSame(sync, bindings.adopt("m0", sync, null, null), "a synchronous backend is kept as it is");
        disk.close();
    }

    /** A filter that counts through a wrapper, holding nothing; its close must not close the view. */
    static final class CountingFilter implements BackendFilter {
        final AtomicInteger passed = new AtomicInteger();
        final List<AsyncBlockBackend> closedWrappers = new CopyOnWriteArrayList<>();

        @Override
        public String name() {
            return "counting";
        }

        @Override
        public AsyncBlockBackend wrap(String disk, AsyncBlockBackend backend) {
            return new ForwardingAsyncBackend(backend) {
                @Override
                public void submit(BackendIo io) {
                    passed.incrementAndGet();
                    super.submit(io);
                }

                @Override
                public void close() throws IOException {
                    closedWrappers.add(this);
                    super.close();
                }
            };
        }
    }

    @Test
    void aFilterThatGoesIsTakenOutOfRunningDisksAndOneThatComesBackIsPutIn() throws Exception {
        BlockBackend disk = adoptNbdDisk();
        CountingFilter filter = new CountingFilter();
        bindings.addFilter(filter);
        AsyncBlockBackend chain = deviceChain(bindings, "n0", disk);
        HeldBackend backend = nbd.opened.get(0);

        submit(chain, 2);
        assertEquals(2, filter.passed.get(), "the disk goes through the filter");
        bindings.removeFilter(filter);
        assertEquals(1, filter.closedWrappers.size(), "the gone filter's wrapper is retired");
        assertFalse(backend.closed, "retiring a wrapper leaves the backend open");
        submit(chain, 2);
        assertEquals(2, filter.passed.get(), "no longer through the gone filter");

        CountingFilter back = new CountingFilter();
        bindings.addFilter(back);
        submit(chain, 3);
        assertEquals(3, back.passed.get(), "the returning filter is in force on the running disk");
        assertEquals(7, backend.completeAll(), "every request reached the backend");
        bindings.removeFilter(back);
        bindings.addFilter(back);
        chain.close();
        assertFalse(backend.closed, "the device's close closes its view, not the disk's backend");
        assertEquals(2, back.closedWrappers.size(), "one retired, the last closed with the device");
        bindings.addFilter(new CountingFilter());
        assertEquals(2, back.closedWrappers.size(), "a closed device's chain is no longer rebuilt");
        disk.close();
        assertTrue(backend.closed);
    }

    @Test
    void aSuspensionGivesUpWaitingAfterItsTimeoutAndTheCloseFailsWhatIsLeft() throws Exception {
        HeldBackend b = new HeldBackend(1 << 20);
        SwappableBackend s = new SwappableBackend("n0", b);
        RecordedIo io = io(BackendIo.Op.READ);
        s.submit(io);
        s.suspend(50);
        assertTrue(b.closed);
        // The held backend completes late (as NBD's close fails its requests): counted once, no error lost.
        b.completeAll();
        assertEquals(1, io.completions.get());
        assertNull(io.error);
        s.close();
    }

    @Test
    void aDiskTakenDownWhileItsBackendIsAwayFailsItsHeldRequestsAtOnce() throws Exception {
        List<RecordedIo> held = heldWhileTheFactoryIsGone(3);
        assertTrue(held.stream().allMatch(BackendBindingsTest::pending));
        // kp:detach or a core bundle's swap: the device's reset must not wait for them until its timeout.
        bindings.failHeld("n0");
        assertTrue(held.stream().allMatch(BackendBindingsTest::failedOnce));
        RecordedIo late = submit(chain, 1).get(0);
        assertEquals(1, late.completions.get(), "one arriving before the device stopped fails too");
        chain.close();
        disk.close();
        bindings.forget("n0");
    }
}
