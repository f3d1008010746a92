package io.kickplug.blk.device;

import static io.kickplug.api.virtio.BufferSpec.readable;
import static io.kickplug.api.virtio.BufferSpec.writable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.blk.fake.GatedBackend;
import io.kickplug.blk.fake.RecordingBackend;
import io.kickplug.guest.engine.ForwardingIoThread;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.blk.fake.PatternIo;
import io.kickplug.blk.fake.DiscardSegments;
import io.kickplug.virtio.testkit.Await;
import io.kickplug.virtio.iothread.EventLoopThread;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The asynchronous pipeline (worker pool, completions on the queue's I/O thread), the tracked list seen
 * through the ring, and multi-queue mapping, all through virtio-mmio and split rings.
 */
class VirtioBlkDeviceAsyncTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final long DISK = 1 << 20;
    private static final long ALL = -1L;
    /** The names of the disk's worker threads start so. */
    private static final String WORKER = "kickplug-blk-async-worker";

    @RegisterExtension
    final DeviceRig rig = new DeviceRig();
    /** Source name -> names of the threads that ran its handler. */
    private final Map<String, List<String>> handlerThreads = new ConcurrentHashMap<>();

    /** An I/O thread that records which thread runs each source's handler. */
    private IoThread recording(String name) {
        return new ForwardingIoThread(new EventLoopThread(name)) {
            @Override
            public IoSource register(String source, Runnable handler) {
                return delegate.register(source, () -> {
                    handlerThreads.computeIfAbsent(source, k -> new java.util.concurrent.CopyOnWriteArrayList<>())
                            .add(Thread.currentThread().getName());
                    handler.run();
                });
            }
        };
    }

    private RawRingGuest start(BlockBackend backend, int queues, int ioThreads, List<List<Integer>> mapping,
            TrackedLockKind lock, int workers) {
        for (int i = 0; i < ioThreads; i++) {
            rig.threads.add(recording("io" + i));
        }
        rig.device(BlkDeviceSpec.of("async", backend, false, queues, 256,
                "async".getBytes(StandardCharsets.US_ASCII), rig.threads)
                .withMapping(QueueMapping.of(mapping, queues, ioThreads)).withTrackedLock(lock).withWorkers(workers));
        return rig.guest(8 << 20, ALL, queues, 64);
    }

    private static void await(String what, BooleanSupplier condition) {
        Await.await(condition, TIMEOUT, what);
    }

    /** A write of {@code sectors} sectors of {@code fill} at {@code sector}; returns the status address. */
    private static long write(RawRingGuest guest, int q, long sector, int sectors, byte fill, Object token) {
        byte[] data = new byte[sectors * 512];
        java.util.Arrays.fill(data, fill);
        long status = guest.alloc(1, 1);
        guest.memory().fill(status, 1, (byte) 0xFF);
        guest.submit(q, List.of(readable(guest.header(VirtioBlk.T_OUT, sector), 16),
                readable(guest.put(data), data.length), writable(status, 1)), false, token);
        return status;
    }

    private static long request(RawRingGuest guest, int q, int type, long sector, Object token) {
        long status = guest.alloc(1, 1);
        guest.memory().fill(status, 1, (byte) 0xFF);
        guest.submit(q, List.of(readable(guest.header(type, sector), 16), writable(status, 1)), false, token);
        return status;
    }

    private static long writeZeroes(RawRingGuest guest, int q, long sector, int sectors, Object token) {
        long status = guest.alloc(1, 1);
        guest.memory().fill(status, 1, (byte) 0xFF);
        byte[] segment = DiscardSegments.one(sector, sectors, 0);
        guest.submit(q, List.of(readable(guest.header(VirtioBlk.T_WRITE_ZEROES, 0), 16),
                readable(guest.put(segment), segment.length), writable(status, 1)), false, token);
        return status;
    }

    /**
     * {@code token} (status at {@code status}, queue 1) completed OK while the request {@code waiting} (the backend's
     * "kind@sector" name of a request that overlaps one held at the gate) has not begun: a request that overlaps
     * nothing in flight does not wait.
     */
    private static void assertPassedAhead(RawRingGuest guest, GatedBackend backend, long status, String token,
            String waiting, String why) throws InterruptedException {
        assertEquals(token, guest.awaitUsed(1, TIMEOUT).token(), why);
        assertEquals(VirtioBlk.S_OK, guest.get(status, 1)[0]);
        assertFalse(backend.events.contains("begin " + waiting), backend.events.toString());
    }

    /** Opens the gate at {@code sector}: {@code held} (queue 0) completes, then {@code waiting} (queue 1) after it. */
    private static void openInOrder(RawRingGuest guest, GatedBackend backend, long sector, String held,
            String waiting) throws InterruptedException {
        backend.open(sector);
        assertEquals(held, guest.awaitUsed(0, TIMEOUT).token());
        assertEquals(waiting, guest.awaitUsed(1, TIMEOUT).token());
    }

    @Test
    void blockingBackendRequestsCompleteOutOfOrderExactlyOnceWithTheirStatus() throws Exception {
        GatedBackend backend = new GatedBackend(new MemoryBackend(DISK, false));
        RawRingGuest guest = start(backend, 1, 1, List.of(), TrackedLockKind.MUTEX, 4);
        long[] status = new long[4];
        for (int i = 0; i < 4; i++) {
            backend.close(i * 8L);
            status[i] = write(guest, 0, i * 8L, 8, (byte) (i + 1), "w" + i);
        }
        backend.awaitEntered(4); // four requests in flight on one queue, one per worker
        assertTrue(backend.threads.stream().allMatch(t -> t.startsWith(WORKER)), "a blocking backend's calls run on "
                + "the disk's workers: " + backend.threads);
        // Refused (out of range) and backend-free (GET_ID) requests complete at once, past the blocked ones.
        long beyond = write(guest, 0, DISK / 512, 8, (byte) 9, "beyond");
        assertEquals("beyond", guest.awaitUsed(0, TIMEOUT).token());
        assertEquals(VirtioBlk.S_IOERR, guest.get(beyond, 1)[0]);
        for (int i = 3; i >= 0; i--) {
            backend.open(i * 8L);
            UsedBuffer used = guest.awaitUsed(0, TIMEOUT);
            assertEquals("w" + i, used.token(), "the completion follows the backend, not the submission order");
            assertEquals(1, used.writtenBytes());
            assertEquals(VirtioBlk.S_OK, guest.get(status[i], 1)[0]);
        }
        assertNull(guest.queue(0).getUsed(), "every request is completed exactly once");
        assertEquals(5, rig.device.stats().requestsCompleted());
        assertEquals(0, rig.device.stats().requestsInFlight());
        assertTrue(backend.threads.stream().allMatch(t -> t.startsWith("kickplug-blk-async-worker")),
                "backend calls run on the worker pool: " + backend.threads);
        ByteBuffer onDisk = ByteBuffer.allocate(512);
        backend.read(24 * 512, new ByteBuffer[] {onDisk});
        assertEquals(4, onDisk.get(0));
    }

    @Test
    void aBackendErrorOnAWorkerIsAnIoErrorForThatRequestOnly() throws Exception {
        GatedBackend backend = new GatedBackend(new io.kickplug.blk.fake.RecordingBackend(new MemoryBackend(DISK,
                false)) {
            @Override
            public void write(long offset, ByteBuffer[] src) throws java.io.IOException {
                if (offset == 0) {
                    throw new java.io.IOException("bad sector");
                }
                super.write(offset, src);
            }
        });
        RawRingGuest guest = start(backend, 1, 1, List.of(), TrackedLockKind.MUTEX, 2);
        long bad = write(guest, 0, 0, 1, (byte) 1, "bad");
        long good = write(guest, 0, 8, 1, (byte) 1, "good");
        guest.awaitUsed(0, TIMEOUT);
        guest.awaitUsed(0, TIMEOUT);
        assertEquals(VirtioBlk.S_IOERR, guest.get(bad, 1)[0]);
        assertEquals(VirtioBlk.S_OK, guest.get(good, 1)[0]);
        assertEquals(1, rig.device.stats().ioErrors());
    }

    // Section 2.4: a reset waits for in-flight requests; they complete with their true status.
    @Test
    void resetWaitsForInFlightRequestsAndTheyCompleteWithTheirTrueStatus() throws Exception {
        GatedBackend backend = new GatedBackend(new MemoryBackend(DISK, false));
        RawRingGuest guest = start(backend, 2, 2, List.of(), TrackedLockKind.MUTEX, 4);
        backend.close(0);
        backend.close(16);
        long s0 = write(guest, 0, 0, 8, (byte) 5, "a");
        long s1 = write(guest, 1, 16, 8, (byte) 6, "b");
        backend.awaitEntered(2);
        Thread[] resetter = new Thread[1];
        CompletableFuture<Void> reset = CompletableFuture.runAsync(() -> {
            resetter[0] = Thread.currentThread();
            guest.reset();
        });
        await("the reset to block", () -> resetter[0] != null
                && resetter[0].getState() == Thread.State.TIMED_WAITING);
        assertFalse(reset.isDone(), "reset must wait for the two requests in flight");
        assertEquals(2, rig.device.stats().requestsInFlight());
        backend.open(0);
        backend.open(16);
        reset.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(VirtioBlk.S_OK, guest.get(s0, 1)[0]);
        assertEquals(VirtioBlk.S_OK, guest.get(s1, 1)[0]);
        assertEquals(0, rig.device.stats().requestsInFlight());
        assertEquals(2, rig.device.stats().requestsCompleted());
        ByteBuffer onDisk = ByteBuffer.allocate(512);
        backend.read(16 * 512, new ByteBuffer[] {onDisk});
        assertEquals(6, onDisk.get(0));
    }

    // Section 5.2.6.2 (FLUSH): the flush covers every write completed before it; the device orders it
    // after every write it accepted earlier.
    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void flushWaitsForEarlierWritesButNotLaterOnes(TrackedLockKind lock) throws Exception {
        GatedBackend backend = new GatedBackend(new MemoryBackend(DISK, false));
        RawRingGuest guest = start(backend, 2, 2, List.of(), lock, 4);
        backend.close(0);
        long w = write(guest, 0, 0, 8, (byte) 1, "early");
        backend.awaitEntered(1);
        long f = request(guest, 1, VirtioBlk.T_FLUSH, 0, "flush");
        await("the flush to be tracked", () -> rig.device.trackedRequests().size() == 2);
        long later = write(guest, 1, 64, 8, (byte) 2, "later");
        assertEquals("later", guest.awaitUsed(1, TIMEOUT).token(), "a later write does not wait for the flush");
        assertFalse(backend.events.contains("begin flush@-1"), "flush reached the backend early: " + backend.events);
        openInOrder(guest, backend, 0, "early", "flush");
        List<String> events = backend.events;
        assertTrue(events.indexOf("end write@0") < events.indexOf("begin flush@-1"), events.toString());
        for (long status : new long[] {w, f, later}) {
            assertEquals(VirtioBlk.S_OK, guest.get(status, 1)[0]);
        }
    }

    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void writeZeroesAndOverlappingWritesAreSerialisedBothWaysButDisjointOnesAreNot(TrackedLockKind lock)
            throws Exception {
        GatedBackend backend = new GatedBackend(new MemoryBackend(DISK, false));
        RawRingGuest guest = start(backend, 2, 2, List.of(), lock, 4);
        // A write in flight, then an overlapping WRITE_ZEROES: it waits for the write.
        backend.close(0);
        write(guest, 0, 0, 8, (byte) 7, "write");
        backend.awaitEntered(1);
        long z = writeZeroes(guest, 1, 4, 8, "zeroes");
        long apart = writeZeroes(guest, 1, 100, 8, "apart");
        assertPassedAhead(guest, backend, apart, "apart", "zeroes@4", "a disjoint WRITE_ZEROES does not wait");
        openInOrder(guest, backend, 0, "write", "zeroes");
        assertEquals(VirtioBlk.S_OK, guest.get(z, 1)[0]);
        assertTrue(backend.events.indexOf("end write@0") < backend.events.indexOf("begin zeroes@4"));

        // A WRITE_ZEROES in flight, then an overlapping write: it waits for the WRITE_ZEROES.
        backend.close(200);
        writeZeroes(guest, 0, 200, 8, "zeroes2");
        backend.awaitEntered(3); // zeroes@100, zeroes@4 (counted since the last wait), zeroes@200
        write(guest, 1, 207, 1, (byte) 3, "write2");
        long free = write(guest, 1, 300, 1, (byte) 3, "free");
        assertPassedAhead(guest, backend, free, "free", "write@207", "a disjoint write does not wait");
        openInOrder(guest, backend, 200, "zeroes2", "write2");
        // The write came last, so its byte survives the zeroes.
        ByteBuffer onDisk = ByteBuffer.allocate(512);
        backend.read(207 * 512, new ByteBuffer[] {onDisk});
        assertEquals(3, onDisk.get(0));
    }

    @Test
    void eachQueueIsServedByTheThreadTheMappingNames() throws Exception {
        RawRingGuest guest = start(new MemoryBackend(DISK, false), 4, 2, List.of(List.of(0, 3), List.of(1, 2)),
                TrackedLockKind.SHARDED, 2);
        for (int q = 0; q < 4; q++) {
            request(guest, q, VirtioBlk.T_FLUSH, 0, "f" + q);
            assertEquals("f" + q, guest.awaitUsed(q, TIMEOUT).token());
        }
        assertEquals(List.of(List.of(0, 3), List.of(1, 2)), rig.device.mapping().asLists());
        String[] expected = {"io0", "io1", "io1", "io0"};
        for (int q = 0; q < 4; q++) {
            List<String> ran = handlerThreads.get("blk-async-q" + q);
            assertTrue(ran != null && !ran.isEmpty(), "queue " + q + " never served");
            for (String t : ran) {
                assertEquals(expected[q], t, "queue " + q);
            }
        }
    }

    @Test
    void mappingErrorsAreClear() {
        assertEquals("queue mapping leaves queue 3 without an I/O thread",
                assertThrows(DiskException.class, () -> QueueMapping.of(List.of(List.of(0, 1), List.of(2)), 4, 2))
                        .getMessage());
        assertEquals("queue mapping names queue 2 twice (I/O threads 0 and 1)",
                assertThrows(DiskException.class,
                        () -> QueueMapping.of(List.of(List.of(0, 2), List.of(1, 2, 3)), 4, 2)).getMessage());
        assertEquals("queue mapping names queue 4 (I/O thread 1), but the disk has queues 0..3",
                assertThrows(DiskException.class, () -> QueueMapping.of(List.of(List.of(0, 1), List.of(2, 3, 4)), 4,
                        2)).getMessage());
        assertEquals("queue mapping has entries for 3 I/O threads, but the disk has 2",
                assertThrows(DiskException.class,
                        () -> QueueMapping.of(List.of(List.of(0), List.of(1), List.of(2, 3)), 4, 2)).getMessage());
        assertEquals(List.of(List.of(0, 2), List.of(1, 3)), QueueMapping.of(List.of(), 4, 2).asLists(),
                "empty: round-robin");
        assertEquals(List.of(List.of(3, 0), List.of(1, 2)).stream().map(l -> l.stream().sorted().toList()).toList(),
                QueueMapping.of(List.of(List.of(3, 0), List.of(1, 2)), 4, 2).asLists());
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void patternOverFourQueuesOnTwoIoThreads(boolean workerPool) throws Exception {
        BlockBackend memory = new MemoryBackend(DISK, false);
        RecordingBackend recording = new RecordingBackend(workerPool ? new GatedBackend(memory) : memory);
        RawRingGuest guest = start(recording, 4, 2, List.of(), TrackedLockKind.MUTEX, 4);
        int blocks = (int) (DISK / 4096);
        PatternIo.write(guest, 4, blocks, 4096, 8, 77);
        assertEquals(List.of(), PatternIo.verify(guest, 4, blocks, 4096, 8, 77));
        assertEquals(2L * blocks, rig.device.stats().requestsCompleted());
        // A blocking backend's calls run on the disk's worker pool, a non-blocking one's on the I/O rig.threads.
        assertFalse(recording.threads.isEmpty());
        assertTrue(recording.threads.stream().allMatch(t -> t.startsWith(WORKER) == workerPool),
                recording.threads::toString);
    }

    /**
     * The tracked-requests lock switches while requests run, and nothing is lost. The switcher goes through
     * every kind twice and moves on only once requests have taken the kind it switched to (its acquisitions
     * grew), while the guest keeps writing; so the test fails if a switch does not happen, if the switcher
     * throws, or if a request is lost or corrupted across a switch.
     */
    @Test
    void switchingTheTrackedLockWhileIoRunsLosesNothing() throws Exception {
        RawRingGuest guest = start(new GatedBackend(new MemoryBackend(DISK, false)), 4, 2, List.of(),
                TrackedLockKind.YIELDING, 4);
        int blocks = (int) (DISK / 4096);
        TrackedLockKind[] kinds = {TrackedLockKind.MUTEX, TrackedLockKind.SHARDED, TrackedLockKind.YIELDING};
        AtomicInteger switches = new AtomicInteger();
        CompletableFuture<Void> switcher = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                for (int round = 0; round < 2 * kinds.length; round++) {
                    TrackedLockKind kind = kinds[round % kinds.length];
                    long before = rig.device.trackedRequests().stats(kind).row("").acquisitions();
                    rig.device.setTrackedLock(kind);
                    await("requests under the " + kind + " lock",
                            () -> rig.device.trackedRequests().stats(kind).row("").acquisitions() > before);
                    switches.incrementAndGet();
                }
                switcher.complete(null);
            } catch (Throwable e) {
                switcher.completeExceptionally(e);
            }
        }, "tracked-lock-switcher");
        t.start();
        long deadline = System.nanoTime() + 4 * TIMEOUT.toNanos();
        int passes = 0;
        try {
            do {
                PatternIo.write(guest, 4, blocks, 4096, 8, 5);
                passes++;
            } while (!switcher.isDone() && passes < 40 && System.nanoTime() < deadline); // 40: guest memory
        } finally {
            t.join(TIMEOUT.toMillis() + 10_000);
        }
        switcher.get(1, TimeUnit.SECONDS); // rethrows what the switcher met
        assertEquals(2 * kinds.length, switches.get(), "switches made while requests ran");
        assertEquals(List.of(), PatternIo.verify(guest, 4, blocks, 4096, 8, 5));
        assertEquals(passes * (long) blocks + blocks, rig.device.stats().requestsCompleted());
        assertEquals(0, rig.device.trackedRequests().size());
        assertTrue(rig.device.trackedRequests().generations() <= 2);
        for (TrackedLockKind k : TrackedLockKind.values()) {
            assertTrue(rig.device.trackedRequests().stats(k).row("").acquisitions() > 0, k + " lock was used");
        }
        assertEquals(TrackedLockKind.YIELDING, rig.device.trackedRequests().kind());
    }
}
