package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskPort;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.FixedBackendIo;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.fake.GatedBackend;
import io.kickplug.blk.testkit.InProcessHost;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link DiskRegistry#openPort}: block requests of a server that is not a virtio transport (the NBD export), over
 * the disk's device's tracked list and backend view.
 */
class DiskRegistryPortTest {

    /** The last gated backend the "gated" factory opened (a blocking backend over memory). */
    private final AtomicReference<GatedBackend> gated = new AtomicReference<>();
    private final List<BackendFactory> factories = List.of(new MemoryBackendFactory(), new BackendFactory() {
        @Override
        public String kind() {
            return "gated";
        }

        @Override
        public BlockBackend open(BackendSpec spec) {
            GatedBackend b = new GatedBackend(new MemoryBackend(spec.sizeBytes(), false));
            gated.set(b);
            return b;
        }
    });
    private final DiskRegistry registry = InProcessHost.registry(() -> factories);

    @AfterEach
    void close() {
        registry.close();
    }

    /** One operation whose completion a test waits for. */
    static final class Io extends FixedBackendIo {
        final CompletableFuture<IOException> done = new CompletableFuture<>();
        final AtomicInteger completions = new AtomicInteger();

        Io(Op op, long offset, long length, ByteBuffer[] buffers, boolean fua, boolean mayUnmap) {
            super(op, offset, length, buffers, fua, mayUnmap);
        }

        static Io read(long offset, int length) {
            ByteBuffer b = ByteBuffer.allocate(length);
            return new Io(Op.READ, offset, length, new ByteBuffer[] {b}, false, false);
        }

        static Io write(long offset, byte[] data, boolean fua) {
            return new Io(Op.WRITE, offset, data.length, new ByteBuffer[] {ByteBuffer.wrap(data)}, fua, false);
        }

        static Io flush() {
            return new Io(Op.FLUSH, 0, 0, new ByteBuffer[0], false, false);
        }

        @Override
        public void complete(IOException error) {
            completions.incrementAndGet();
            done.complete(error);
        }

        IOException await() throws Exception {
            return done.get(10, TimeUnit.SECONDS);
        }
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed + i * 7);
        }
        return b;
    }

    @Test
    void writesAndReadsReachTheDisksBackend() throws Exception {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        DiskPort port = registry.openPort("d0", () -> { });
        assertEquals(1 << 20, port.size());
        assertEquals(512, port.logicalBlockSize());
        assertFalse(port.readOnly());
        byte[] data = pattern(8192, 3);
        Io w = Io.write(4096, data, false);
        port.submit(w);
        assertNull(w.await());
        Io r = Io.read(4096, 8192);
        port.submit(r);
        assertNull(r.await());
        assertArrayEquals(data, r.buffers()[0].array());
        assertEquals(1, w.completions.get());
        assertEquals(1, r.completions.get());
        port.close();
    }

    @Test
    void requestsOutsideTheDiskOrWithWrongBuffersFailWithoutReachingTheBackend() throws Exception {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        DiskPort port = registry.openPort("d0", () -> { });
        Io past = Io.read((1 << 20) - 512, 1024);
        port.submit(past);
        assertNotNull(past.await(), "a read past the end fails");
        Io overflow = new Io(BackendIo.Op.WRITE, Long.MAX_VALUE - 100, 512,
                new ByteBuffer[] {ByteBuffer.allocate(512)}, false, false);
        port.submit(overflow);
        assertNotNull(overflow.await(), "offset + length overflowing a long fails");
        Io negative = new Io(BackendIo.Op.READ, -512, 512, new ByteBuffer[] {ByteBuffer.allocate(512)}, false, false);
        port.submit(negative);
        assertNotNull(negative.await());
        Io shortBuffer = new Io(BackendIo.Op.READ, 0, 1024, new ByteBuffer[] {ByteBuffer.allocate(512)}, false,
                false);
        port.submit(shortBuffer);
        assertNotNull(shortBuffer.await(), "buffers that do not hold length bytes fail");
        port.close();
    }

    @Test
    void aReadOnlyDiskRefusesWritesDiscardsAndZeroes() throws Exception {
        registry.attach(DiskSpec.memory("d0", 1 << 20).withBackend(
                new BackendSpec("memory", null, 1 << 20, true, false, false, 0)));
        DiskPort port = registry.openPort("d0", () -> { });
        assertTrue(port.readOnly());
        assertFalse(port.supportsDiscard());
        assertFalse(port.supportsWriteZeroes());
        for (BackendIo.Op op : List.of(BackendIo.Op.WRITE, BackendIo.Op.DISCARD, BackendIo.Op.WRITE_ZEROES)) {
            ByteBuffer[] buffers = op == BackendIo.Op.WRITE ? new ByteBuffer[] {ByteBuffer.allocate(512)}
                    : new ByteBuffer[0];
            Io io = new Io(op, 0, 512, buffers, false, false);
            port.submit(io);
            IOException e = io.await();
            assertNotNull(e, op + " on a read-only disk");
            assertTrue(e.getMessage().contains("read-only"), e.getMessage());
        }
        port.close();
    }

    /** NBD_CMD_FLAG_FUA over a backend without FUA: the write, then a flush, then the completion. */
    @Test
    void aFuaWriteIsFollowedByAFlushBeforeItCompletes() throws Exception {
        registry.attach(DiskSpec.memory("d0", 1 << 20).withBackend(new BackendSpec("gated", null, 1 << 20, false,
                false, false, 0)));
        GatedBackend backend = gated.get();
        DiskPort port = registry.openPort("d0", () -> { });
        backend.close(GatedBackend.FLUSH);
        Io w = Io.write(0, pattern(512, 1), true);
        port.submit(w);
        backend.awaitEntered(2);
        assertFalse(w.done.isDone(), "the FUA write waits for its flush");
        assertEquals(List.of("begin write@0", "end write@0", "begin flush@-1"), backend.events);
        backend.open(GatedBackend.FLUSH);
        assertNull(w.await());
        port.close();
    }

    /** Ordering in the device's tracked list: a FLUSH waits for a write accepted before it (seed 004). */
    @ParameterizedTest
    @EnumSource(TrackedLockKind.class)
    void aFlushWaitsForTheWritesAcceptedBeforeItOnAnyPort(TrackedLockKind lock) throws Exception {
        registry.attach(DiskSpec.memory("d0", 1 << 20).withTrackedLock(lock).withBackend(new BackendSpec("gated",
                null, 1 << 20, false, false, false, 0)));
        GatedBackend backend = gated.get();
        DiskPort a = registry.openPort("d0", () -> { });
        DiskPort b = registry.openPort("d0", () -> { });
        backend.close(8);
        Io w = Io.write(8 * 512, pattern(512, 9), false);
        a.submit(w);
        backend.awaitEntered(1);
        assertEquals(1, registry.device("d0").trackedRequests().size(), "the port's write is in the disk's list");
        Io f = Io.flush();
        b.submit(f);
        assertFalse(f.done.isDone());
        assertEquals(List.of("begin write@8"), backend.events, "the flush has not reached the backend");
        backend.open(8);
        assertNull(w.await());
        assertNull(f.await());
        assertEquals(List.of("begin write@8", "end write@8", "begin flush@-1", "end flush@-1"), backend.events);
        a.close();
        b.close();
    }

    @Test
    void detachWaitsForThePortsRequestsThenRunsItsActionAndLaterRequestsFail() throws Exception {
        registry.attach(DiskSpec.memory("d0", 1 << 20).withBackend(new BackendSpec("gated", null, 1 << 20, false,
                false, false, 0)));
        GatedBackend backend = gated.get();
        CountDownLatch detached = new CountDownLatch(1);
        DiskPort port = registry.openPort("d0", detached::countDown);
        backend.close(0);
        Io w = Io.write(0, pattern(512, 5), false);
        port.submit(w);
        backend.awaitEntered(1);
        CompletableFuture<Void> detach = CompletableFuture.runAsync(() -> registry.detach("d0"));
        // The detach cannot end before the write: it waits for it (the write is completed exactly once, with OK).
        assertFalse(detached.await(200, TimeUnit.MILLISECONDS), "detach ran its action before the write ended");
        backend.open(0);
        assertNull(w.await(), "the write in flight completes with its true status");
        detach.get(10, TimeUnit.SECONDS);
        assertTrue(detached.await(10, TimeUnit.SECONDS));
        assertEquals(1, w.completions.get());
        Io late = Io.read(0, 512);
        port.submit(late);
        assertNotNull(late.await(), "a request after the detach fails");
        port.close(); // idempotent after a detach
    }

    @Test
    void closingThePortDoesNotRunTheDetachActionAndUnknownDisksAreRefused() throws Exception {
        assertThrows(DiskException.class, () -> registry.openPort("nope", () -> { }));
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        AtomicInteger detached = new AtomicInteger();
        DiskPort port = registry.openPort("d0", detached::incrementAndGet);
        port.close();
        registry.detach("d0");
        assertEquals(0, detached.get());
    }
}
