package io.kickplug.blk.device;

import static io.kickplug.api.virtio.BufferSpec.readable;
import static io.kickplug.api.virtio.BufferSpec.writable;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.blk.fake.RecordingBackend;
import io.kickplug.virtio.testkit.Await;
import io.kickplug.virtio.iothread.EventLoopThread;
import io.kickplug.api.transport.MmioRegisters;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A simulated guest drives the device through virtio-mmio and real split rings in guest memory. */
class VirtioBlkDeviceEndToEndTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final long DISK = 1 << 20;
    private static final long ALL = -1L;

    @RegisterExtension
    final DeviceRig rig = new DeviceRig();

    private RawRingGuest start(BlockBackend backend, boolean readOnly, int queues, int ioThreads, long features,
            int queueSize) {
        for (int i = 0; i < ioThreads; i++) {
            rig.threads.add(new EventLoopThread("test-io" + i));
        }
        rig.device(BlkDeviceSpec.of("e2e", backend, readOnly, queues, 256,
                "e2e-serial".getBytes(StandardCharsets.US_ASCII), rig.threads));
        return rig.guest(8 << 20, features, queues, queueSize);
    }

    private static byte[] random(int length, long seed) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    @Test
    void writeThenReadWithThreeDescriptorChains() throws Exception {
        MemoryBackend backend = new MemoryBackend(DISK, false);
        RawRingGuest guest = start(backend, false, 1, 1, ALL, 64);
        assertEquals(DISK / 512, guest.config(VirtioBlk.CFG_CAPACITY, 8));
        byte[] data = random(4096, 1);

        long status = guest.alloc(1, 1);
        guest.submit(0, List.of(readable(guest.header(VirtioBlk.T_OUT, 8), 16),
                readable(guest.put(data), data.length), writable(status, 1)), false, "write");
        UsedBuffer written = guest.awaitUsed(0, TIMEOUT);
        assertEquals("write", written.token());
        assertEquals(1, written.writtenBytes()); // only the status byte
        assertEquals(VirtioBlk.S_OK, guest.get(status, 1)[0]);

        ByteBuffer onDisk = ByteBuffer.allocate(4096);
        backend.read(8 * 512, new ByteBuffer[] {onDisk});
        assertArrayEquals(data, onDisk.array());

        long buffer = guest.alloc(4096, 16);
        long readStatus = guest.alloc(1, 1);
        guest.submit(0, List.of(readable(guest.header(VirtioBlk.T_IN, 8), 16), writable(buffer, 4096),
                writable(readStatus, 1)), false, "read");
        UsedBuffer read = guest.awaitUsed(0, TIMEOUT);
        assertEquals("read", read.token());
        assertEquals(4096 + 1, read.writtenBytes());
        assertEquals(VirtioBlk.S_OK, guest.get(readStatus, 1)[0]);
        assertArrayEquals(data, guest.get(buffer, 4096));
        assertEquals(2, rig.device.stats().requestsCompleted());
        assertEquals(0, rig.device.stats().requestsInFlight());
    }

    // Section 2.7.4: the device accepts any framing, including indirect tables (2.7.5.3).
    @Test
    void twoDescriptorAndIndirectLayouts() throws Exception {
        RawRingGuest guest = start(new MemoryBackend(DISK, false), false, 1, 1, ALL, 64);
        assertTrue((guest.features() & VirtioFeatures.RING_INDIRECT_DESC) != 0);
        byte[] data = random(1024, 2);
        // Header and data in one readable buffer.
        long out = guest.alloc(16 + 1024, 16);
        guest.memory().write(out, ByteBuffer.allocate(16).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .putInt(VirtioBlk.T_OUT).putInt(0).putLong(100).flip());
        guest.memory().write(out + 16, data, 0, data.length);
        long status = guest.alloc(1, 1);
        guest.submit(0, List.of(readable(out, 16 + 1024), writable(status, 1)), true, "w");
        assertEquals(1, guest.awaitUsed(0, TIMEOUT).writtenBytes());
        assertEquals(VirtioBlk.S_OK, guest.get(status, 1)[0]);

        // Data and status in one writable buffer: the status is its last byte.
        long in = guest.alloc(1024 + 1, 16);
        guest.submit(0, List.of(readable(guest.header(VirtioBlk.T_IN, 100), 16), writable(in, 1024 + 1)), false, "r");
        assertEquals(1024 + 1, guest.awaitUsed(0, TIMEOUT).writtenBytes());
        byte[] got = guest.get(in, 1024 + 1);
        assertEquals(VirtioBlk.S_OK, got[1024]);
        assertArrayEquals(data, Arrays.copyOf(got, 1024));
    }

    @Test
    void getIdAndUnsupportedThroughTheRing() throws Exception {
        RawRingGuest guest = start(new MemoryBackend(DISK, false), false, 1, 1, ALL, 16);
        long id = guest.alloc(21, 1);
        guest.submit(0, List.of(readable(guest.header(VirtioBlk.T_GET_ID, 0), 16), writable(id, 21)), false, "id");
        assertEquals(21, guest.awaitUsed(0, TIMEOUT).writtenBytes());
        byte[] answer = guest.get(id, 21);
        assertArrayEquals(Arrays.copyOf("e2e-serial".getBytes(StandardCharsets.US_ASCII), 20), Arrays.copyOf(answer, 20));
        assertEquals(VirtioBlk.S_OK, answer[20]);

        long status = guest.alloc(1, 1);
        guest.submit(0, List.of(readable(guest.header(12, 0), 16), writable(status, 1)), false, "unknown");
        assertEquals(1, guest.awaitUsed(0, TIMEOUT).writtenBytes());
        assertEquals(VirtioBlk.S_UNSUPP, guest.get(status, 1)[0]);
    }

    // Section 5.2.6.2: writes to a read-only device fail with IOERR and do not reach the disk.
    @Test
    void readOnlyDiskRefusesWrites() throws Exception {
        RecordingBackend backend = new RecordingBackend(new MemoryBackend(DISK, false));
        RawRingGuest guest = start(backend, true, 1, 1, ALL, 16);
        assertTrue((guest.features() & VirtioBlk.F_RO) != 0);
        long status = guest.alloc(1, 1);
        guest.submit(0, List.of(readable(guest.header(VirtioBlk.T_OUT, 0), 16), readable(guest.put(random(512, 3)), 512),
                writable(status, 1)), false, "w");
        guest.awaitUsed(0, TIMEOUT);
        assertEquals(VirtioBlk.S_IOERR, guest.get(status, 1)[0]);
        assertEquals(0, backend.writes.get());
    }

    @Test
    void severalQueuesOnSeveralThreads() throws Exception {
        RawRingGuest guest = start(new MemoryBackend(DISK, false), false, 4, 2, ALL, 32);
        assertTrue((guest.features() & VirtioBlk.F_MQ) != 0);
        assertEquals(4, guest.config(VirtioBlk.CFG_NUM_QUEUES, 2));
        for (int q = 0; q < 4; q++) {
            long status = guest.alloc(1, 1);
            guest.submit(q, List.of(readable(guest.header(VirtioBlk.T_OUT, q), 16),
                    readable(guest.put(random(512, 10 + q)), 512), writable(status, 1)), false, "w" + q);
            assertEquals("w" + q, guest.awaitUsed(q, TIMEOUT).token());
            assertEquals(VirtioBlk.S_OK, guest.get(status, 1)[0]);
        }
        for (int q = 0; q < 4; q++) {
            long buffer = guest.alloc(512 + 1, 16);
            guest.submit(3 - q, List.of(readable(guest.header(VirtioBlk.T_IN, q), 16), writable(buffer, 513)), false,
                    "r" + q);
            guest.awaitUsed(3 - q, TIMEOUT);
            assertArrayEquals(random(512, 10 + q), guest.get(buffer, 512));
        }
        assertEquals(8, rig.device.stats().requestsCompleted());
    }

    @Test
    void manyRequestsInOneBatchWithoutEventIdx() throws Exception {
        RawRingGuest guest = start(new MemoryBackend(DISK, false), false, 1, 1,
                ALL & ~VirtioFeatures.RING_EVENT_IDX, 64);
        int n = 20; // 60 of the 64 descriptors
        long[] statuses = new long[n];
        for (int i = 0; i < n; i++) {
            statuses[i] = guest.alloc(1, 1);
            guest.submit(0, List.of(readable(guest.header(VirtioBlk.T_OUT, i), 16),
                    readable(guest.put(random(512, i)), 512), writable(statuses[i], 1)), false, i);
        }
        for (int i = 0; i < n; i++) {
            guest.awaitUsed(0, TIMEOUT);
        }
        for (long status : statuses) {
            assertEquals(VirtioBlk.S_OK, guest.get(status, 1)[0]);
        }
        assertEquals(n, rig.device.stats().requestsCompleted());
        assertEquals(n * 512L, rig.device.stats().bytesWritten());
    }

    // Section 2.1.2: a malformed request sets DEVICE_NEEDS_RESET and sends a configuration interrupt.
    @Test
    void malformedRequestNeedsReset() throws Exception {
        RawRingGuest guest = start(new MemoryBackend(DISK, false), false, 1, 1, ALL, 16);
        // The queue's worker says when it stops the queue (its log, through the JUL bridge of System.Logger).
        Logger workerLog = Logger.getLogger(QueueWorker.class.getName());
        List<String> logged = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                logged.add(record.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        workerLog.addHandler(handler);
        try {
            long shortHeader = guest.put(new byte[8]);
            guest.submit(0, List.of(readable(shortHeader, 8), writable(guest.alloc(1, 1), 1)), false, "bad");
            guest.awaitInterrupt(MmioRegisters.INT_CONFIG_CHANGE, TIMEOUT);
            assertNotEquals(0, guest.status() & DeviceStatus.DEVICE_NEEDS_RESET);
            Await.await(() -> logged.stream().anyMatch(m -> m.contains("queue 0: guest fault, queue stopped until reset")),
                    "the worker stops queue 0 (logged: " + logged + ")");
            assertFalse(guest.queue(0).hasUsed(), "the malformed chain is not returned");
        } finally {
            workerLog.removeHandler(handler);
        }

        // After a reset the device works again.
        guest.reset();
        assertEquals(0, guest.status());
        guest.init(ALL, 1, 16);
        long status = guest.alloc(1, 1);
        guest.submit(0, List.of(readable(guest.header(VirtioBlk.T_FLUSH, 0), 16), writable(status, 1)), false, "f");
        guest.awaitUsed(0, TIMEOUT);
        assertEquals(VirtioBlk.S_OK, guest.get(status, 1)[0]);
    }

    // Section 2.4: reset waits for in-flight requests, which complete with their true status.
    @Test
    void resetWaitsForTheRequestInFlight() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        MemoryBackend memory = new MemoryBackend(DISK, false);
        BlockBackend slow = new RecordingBackend(memory) {
            @Override
            public void read(long offset, ByteBuffer[] dst) throws IOException {
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
                super.read(offset, dst);
            }
        };
        RawRingGuest guest = start(slow, false, 1, 1, ALL, 16);
        long buffer = guest.alloc(513, 16);
        guest.submit(0, List.of(readable(guest.header(VirtioBlk.T_IN, 0), 16), writable(buffer, 513)), false, "r");
        assertTrue(entered.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));

        CompletableFuture<Void> reset = CompletableFuture.runAsync(rig.device::reset);
        assertFalse(reset.isDone(), "reset returned while the backend still held the request");
        assertEquals(1, rig.device.stats().requestsInFlight());
        release.countDown();
        reset.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        assertEquals(0, rig.device.stats().requestsInFlight());
        assertEquals(1, rig.device.stats().requestsCompleted());
        assertEquals(VirtioBlk.S_OK, guest.get(buffer + 512, 1)[0]);
        assertTrue(guest.queue(0).hasUsed(), "the request was pushed before reset returned");
    }
}
