package io.kickplug.blk.manager;

import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.TransportFactory;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.backend.NullBackendFactory;
import io.kickplug.guest.engine.ForwardingIoThread;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.blk.fake.RecordingBackend;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DiskRegistryTest {

    private static final long MEMORY = 4L << 20;

    /** Counts the I/O threads that are running. */
    private final AtomicInteger liveThreads = new AtomicInteger();
    private final IoThreadFactory threads = new IoThreadFactory() {
        private final IoThreadFactory real = new IoThreadFactoryComponent();

        @Override
        public IoThread start(String name) {
            IoThread thread = real.start(name);
            liveThreads.incrementAndGet();
            return new ForwardingIoThread(thread) {
                private boolean closed;

                @Override
                public synchronized void close() {
                    if (!closed) {
                        closed = true;
                        delegate.close();
                        liveThreads.decrementAndGet();
                    }
                }
            };
        }
    };

    /** Backends opened and not closed. */
    private final List<RecordingBackend> openBackends = new CopyOnWriteArrayList<>();
    private final BackendFactory memoryBackends = recording(new MemoryBackendFactory());
    private final List<BackendFactory> factories = new ArrayList<>(List.of(memoryBackends,
            recording(new NullBackendFactory())));
    private TransportFactory transports = new TransportFactoryComponent(new VirtqueueFactoryComponent());
    private GuestMemoryFactory memories = new GuestMemoryFactoryComponent();
    private DiskRegistry registry = newRegistry();

    private DiskRegistry newRegistry() {
        return new DiskRegistry((kind, device, memory) -> transports.create(kind, device, memory), threads,
                memories, () -> factories);
    }

    private BackendFactory recording(BackendFactory inner) {
        return new BackendFactory() {
            @Override
            public String kind() {
                return inner.kind();
            }

            @Override
            public BlockBackend open(BackendSpec spec) throws IOException {
                RecordingBackend backend = new RecordingBackend(inner.open(spec)) {
                    @Override
                    public void close() throws IOException {
                        openBackends.remove(this);
                        super.close();
                    }
                };
                openBackends.add(backend);
                return backend;
            }
        };
    }

    @AfterEach
    void tearDown() {
        registry.close();
        assertEquals(0, liveThreads.get(), "I/O threads left running");
        assertEquals(List.of(), openBackends, "backends left open");
    }

    private static DiskSpec spec(String name, String kind, long size, int queues, int queueSize, int ioThreads,
            String serial) {
        return new DiskSpec(name, new BackendSpec(kind, null, size, false), TransportKind.MMIO, queues, queueSize,
                ioThreads, serial, MEMORY);
    }

    private static DiskSpec good(String name) {
        return spec(name, "memory", 1 << 20, 1, 64, 1, null);
    }

    private void assertRefused(DiskSpec spec, String message) {
        DiskException e = assertThrows(DiskException.class, () -> registry.attach(spec));
        assertEquals(message, e.getMessage());
        assertEquals(0, liveThreads.get());
        assertEquals(List.of(), openBackends);
    }

    @Test
    void attachListInfoDetach() {
        DiskInfo info = registry.attach(spec("d0", "memory", 1 << 20, 2, 128, 2, "abc"));
        // The round-robin mapping is reported as it is in effect: queue 0 on thread 0, queue 1 on thread 1.
        assertEquals(new DiskInfo("d0", 1 << 20, "memory", false, TransportKind.MMIO, 2, 128, 2, 0, 0, 0, null,
                List.of(List.of(0), List.of(1)), TrackedLockKind.MUTEX), info);
        assertEquals(2, liveThreads.get());
        assertEquals(1, openBackends.size());
        registry.attach(spec("d1", "null", 1L << 40, 1, 256, 1, null));
        assertEquals(List.of("d0", "d1"), registry.list().stream().map(DiskInfo::name).toList());
        assertEquals(1L << 40, registry.info("d1").sizeBytes());
        assertNotNull(registry.port("d0").mmio());

        registry.detach("d0");
        assertEquals(List.of("d1"), registry.list().stream().map(DiskInfo::name).toList());
        assertEquals(1, liveThreads.get());
        assertEquals(1, openBackends.size());
        assertEquals("no disk named 'd0'", assertThrows(DiskException.class, () -> registry.detach("d0")).getMessage());
    }

    @Test
    void unknownNames() {
        assertEquals("no disk named 'x'", assertThrows(DiskException.class, () -> registry.info("x")).getMessage());
        assertEquals("no disk named 'x'", assertThrows(DiskException.class, () -> registry.port("x")).getMessage());
        assertEquals("no disk named 'x'", assertThrows(DiskException.class, () -> registry.detach("x")).getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a b", "../etc", "disk/1", "é",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})
    void refusesBadNames(String name) {
        assertRefused(good(name), "invalid disk name '" + name + "': use 1 to 64 letters, digits, '.', '_' or '-'");
    }

    @Test
    void acceptsTheWholeNameAlphabet() {
        registry.attach(good("A-z_0.9"));
        registry.attach(good("n".repeat(64)));
        assertEquals(2, registry.list().size());
    }

    @Test
    void refusesDuplicates() {
        registry.attach(good("d"));
        DiskException e = assertThrows(DiskException.class, () -> registry.attach(good("d")));
        assertEquals("a disk named 'd' is already attached", e.getMessage());
        assertEquals(1, liveThreads.get());
        assertEquals(1, openBackends.size());
    }

    @Test
    void refusesUnknownBackendKinds() {
        assertRefused(spec("d", "tape", 1 << 20, 1, 64, 1, null), "unknown backend kind 'tape' (available: memory, null)");
        factories.clear();
        assertRefused(good("d"), "unknown backend kind 'memory' (available: none)");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -512, 1000, 513})
    void refusesBadSizes(long size) {
        assertRefused(spec("d", "memory", size, 1, 64, 1, null),
                "disk size " + size + " is not a positive multiple of 512 bytes");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, DiskSpec.MAX_QUEUES + 1})
    void refusesBadQueueCounts(int queues) {
        assertRefused(spec("d", "memory", 1 << 20, queues, 64, 1, null),
                "number of queues " + queues + " is not in 1..64");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 3, 100, 65536, -2})
    void refusesBadQueueSizes(int size) {
        assertRefused(spec("d", "memory", 1 << 20, 1, size, 1, null),
                "queue size " + size + " is not a power of two in 2..32768");
    }

    @Test
    void refusesBadThreadCounts() {
        assertRefused(spec("d", "memory", 1 << 20, 1, 64, 0, null), "number of I/O threads 0 is not in 1..64");
    }

    // Section 5.2.6: the GET_ID answer is 20 bytes.
    @Test
    void refusesLongSerials() {
        assertRefused(spec("d", "memory", 1 << 20, 1, 64, 1, "123456789012345678901"),
                "serial '123456789012345678901' is longer than 20 bytes");
        registry.attach(spec("d", "memory", 1 << 20, 1, 64, 1, "12345678901234567890"));
    }

    @Test
    void refusesMissingParts() {
        assertRefused(null, "no disk spec given");
        assertRefused(new DiskSpec("d", null, TransportKind.MMIO, 1, 64, 1, null, MEMORY), "disk 'd' has no backend kind");
        assertRefused(new DiskSpec("d", new BackendSpec("memory", null, 4096, false), null, 1, 64, 1, null, MEMORY),
                "disk 'd' has no transport");
        assertRefused(new DiskSpec("d", new BackendSpec("memory", null, 4096, false), TransportKind.MMIO, 1, 64, 1,
                null, 0), "guest memory size 0 must be positive");
    }

    @Test
    void transportFailureLeavesNothingBehind() {
        assertRefused(new DiskSpec("d", new BackendSpec("memory", null, 4096, false), TransportKind.VHOST_USER, 1, 64,
                1, null, MEMORY), "cannot put disk 'd' behind transport vhost-user: transport vhost-user is not "
                        + "available in-process (available: mmio, pci)");
        assertEquals(List.of(), registry.list());
    }

    @Test
    void memoryFailureLeavesNothingBehind() {
        memories = new GuestMemoryFactory() {
            @Override
            public io.kickplug.api.memory.GuestMemory allocate(long size) {
                throw new IllegalArgumentException("no memory today");
            }

            @Override
            public io.kickplug.api.memory.GuestMemory allocate(List<io.kickplug.api.memory.MemoryRegion> layout) {
                throw new IllegalArgumentException("no memory today");
            }

            @Override
            public io.kickplug.api.memory.GuestMemory wrap(List<io.kickplug.api.memory.MemoryRegion> layout,
                    List<List<java.nio.ByteBuffer>> chunks) {
                throw new IllegalArgumentException("no memory today");
            }
        };
        registry = newRegistry();
        assertRefused(spec("d", "memory", 4096, 2, 64, 2, null),
                "cannot allocate 4194304 bytes of guest memory for disk 'd': no memory today");
    }

    @Test
    void backendFailureLeavesNothingBehind() {
        factories.add(new BackendFactory() {
            @Override
            public String kind() {
                return "broken";
            }

            @Override
            public BlockBackend open(BackendSpec spec) throws IOException {
                throw new IOException("no such device");
            }
        });
        assertRefused(spec("d", "broken", 4096, 1, 64, 1, null),
                "cannot open the broken backend of disk 'd': no such device");
    }

    @Test
    void attachedDiskServesAGuest() throws Exception {
        registry.attach(spec("g", "memory", 1 << 20, 1, 64, 1, null));
        GuestPort port = registry.port("g");
        RawRingGuest guest = new RawRingGuest(port).init(-1L, 1, 16);
        assertEquals(DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER | DeviceStatus.FEATURES_OK | DeviceStatus.DRIVER_OK,
                registry.info("g").deviceStatus());
        long id = guest.alloc(21, 1);
        guest.submit(0, List.of(BufferSpec.readable(guest.header(VirtioBlk.T_GET_ID, 0), 16),
                BufferSpec.writable(id, 21)), false, "id");
        guest.awaitUsed(0, Duration.ofSeconds(10));
        // The default serial is derived from the name.
        assertEquals('g', guest.get(id, 2)[0]);
        assertEquals(0, guest.get(id, 2)[1]);
        DiskInfo info = registry.info("g");
        assertEquals(1, info.requestsCompleted());
        assertEquals(0, info.requestsInFlight());

        registry.detach("g");
        assertEquals(0, liveThreads.get());
        assertTrue(openBackends.isEmpty());
    }
}
