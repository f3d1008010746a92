package io.kickplug.blk.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.virtio.testkit.InlineIoThread;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.blk.backend.NullBackend;
import io.kickplug.guest.engine.ForwardingIoThread;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.blk.fake.RecordingBackend;
import io.kickplug.blk.request.BlkLimits;
import io.kickplug.virtio.transport.MmioTransport;
import io.kickplug.virtio.iothread.EventLoopThread;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class VirtioBlkDeviceConfigTest {

    private static final long SIZE = 3L << 32; // 12 GiB: capacity needs more than 32 bits of bytes

    /** An I/O thread that is never used: these tests do not activate the device. */
    private static final IoThread UNUSED = new InlineIoThread();

    private static VirtioBlkDevice device(int queues, int queueSize, boolean readOnly) {
        return new VirtioBlkDevice(BlkDeviceSpec.of("c", new NullBackend(SIZE, false), readOnly, queues, queueSize,
                new byte[0], List.of(UNUSED)));
    }

    @Test
    void identifiesAsABlockDevice() {
        VirtioBlkDevice device = device(1, 128, false);
        assertEquals(DeviceIds.BLOCK, device.deviceId());
        assertEquals(1, device.queueCount());
        assertEquals(128, device.maxQueueSize());
        assertEquals(VirtioBlk.CONFIG_SIZE, device.configSize());
    }

    // Section 5.2.3 and 6: VERSION_1 is mandatory; MQ only with several queues, RO only when read-only;
    // 5.2.5.2: FLUSH with CONFIG_WCE. DISCARD/WRITE_ZEROES/SECURE_ERASE follow the backend, never when read-only.
    @Test
    void offersTheFeatures() {
        long base = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_INDIRECT_DESC | VirtioFeatures.RING_EVENT_IDX
                | VirtioBlk.F_SIZE_MAX | VirtioBlk.F_SEG_MAX | VirtioBlk.F_BLK_SIZE | VirtioBlk.F_TOPOLOGY
                | VirtioBlk.F_FLUSH | VirtioBlk.F_CONFIG_WCE | VirtioBlk.F_LIFETIME;
        long zeroing = VirtioBlk.F_DISCARD | VirtioBlk.F_WRITE_ZEROES | VirtioBlk.F_SECURE_ERASE;
        assertEquals(base | zeroing, device(1, 256, false).offeredFeatures());
        assertEquals(base | zeroing | VirtioBlk.F_MQ, device(4, 256, false).offeredFeatures());
        assertEquals(base | VirtioBlk.F_RO, device(1, 256, true).offeredFeatures());
        VirtioBlkDevice plain = new VirtioBlkDevice(BlkDeviceSpec.of("p", new PlainBackend(SIZE), false, 1, 256,
                new byte[0], List.of(UNUSED)));
        assertEquals(base, plain.offeredFeatures());
    }

    /** A backend with none of the optional operations. */
    private static final class PlainBackend extends RecordingBackend {
        PlainBackend(long size) {
            super(new NullBackend(size, false));
        }

        @Override
        public boolean supportsDiscard() {
            return false;
        }

        @Override
        public boolean supportsWriteZeroes() {
            return false;
        }
    }

    @Test
    void readOnlyBackendMakesTheDeviceReadOnly() {
        VirtioBlkDevice device = new VirtioBlkDevice(BlkDeviceSpec.of("c", new NullBackend(4096, true), false, 1, 8,
                new byte[0], List.of(UNUSED)));
        assertEquals(VirtioBlk.F_RO, device.offeredFeatures() & VirtioBlk.F_RO);
    }

    // Section 5.2.4: the configuration layout, little-endian.
    @Test
    void configSpaceFields() {
        VirtioBlkDevice device = device(4, 256, false);
        long capacity = SIZE / 512;
        assertEquals(capacity, device.readConfig(VirtioBlk.CFG_CAPACITY, 8));
        assertEquals(capacity & 0xFFFFFFFFL, device.readConfig(VirtioBlk.CFG_CAPACITY, 4));
        assertEquals(capacity >>> 32, device.readConfig(VirtioBlk.CFG_CAPACITY + 4, 4));
        assertEquals(1 << 20, device.readConfig(VirtioBlk.CFG_SIZE_MAX, 4));
        assertEquals(254, device.readConfig(VirtioBlk.CFG_SEG_MAX, 4));
        assertEquals(0, device.readConfig(VirtioBlk.CFG_GEOMETRY, 4), "GEOMETRY is not offered");
        assertEquals(512, device.readConfig(VirtioBlk.CFG_BLK_SIZE, 4));
        assertEquals(3, device.readConfig(VirtioBlk.CFG_PHYSICAL_BLOCK_EXP, 1));
        assertEquals(0, device.readConfig(VirtioBlk.CFG_ALIGNMENT_OFFSET, 1));
        assertEquals(8, device.readConfig(VirtioBlk.CFG_MIN_IO_SIZE, 2));
        assertEquals(0, device.readConfig(VirtioBlk.CFG_OPT_IO_SIZE, 4));
        assertEquals(4, device.readConfig(VirtioBlk.CFG_NUM_QUEUES, 2));
        assertEquals(BlkLimits.QEMU_MAX_SECTORS, device.readConfig(VirtioBlk.CFG_MAX_DISCARD_SECTORS, 4));
        assertEquals(BlkLimits.DEFAULT_SEGMENTS, device.readConfig(VirtioBlk.CFG_MAX_DISCARD_SEG, 4));
        assertEquals(1, device.readConfig(VirtioBlk.CFG_DISCARD_SECTOR_ALIGNMENT, 4));
        assertEquals(BlkLimits.QEMU_MAX_SECTORS, device.readConfig(VirtioBlk.CFG_MAX_WRITE_ZEROES_SECTORS, 4));
        assertEquals(BlkLimits.DEFAULT_SEGMENTS, device.readConfig(VirtioBlk.CFG_MAX_WRITE_ZEROES_SEG, 4));
        assertEquals(1, device.readConfig(VirtioBlk.CFG_WRITE_ZEROES_MAY_UNMAP, 1));
        assertEquals(BlkLimits.QEMU_MAX_SECTORS, device.readConfig(VirtioBlk.CFG_MAX_SECURE_ERASE_SECTORS, 4));
        assertEquals(BlkLimits.DEFAULT_SEGMENTS, device.readConfig(VirtioBlk.CFG_MAX_SECURE_ERASE_SEG, 4));
        assertEquals(1, device.readConfig(VirtioBlk.CFG_SECURE_ERASE_SECTOR_ALIGNMENT, 4));
        // 5.2.5.2: unused bytes read 0.
        assertEquals(0, device.readConfig(VirtioBlk.CFG_WRITEBACK + 1, 1));
        assertEquals(0, device.readConfig(VirtioBlk.CFG_WRITE_ZEROES_MAY_UNMAP + 1, 2));
    }

    // 5.2.4: the discard/write-zeroes fields read 0 when their features are not offered.
    @Test
    void readOnlyDiskHasNoZeroingLimits() {
        VirtioBlkDevice device = device(1, 256, true);
        for (int offset = VirtioBlk.CFG_MAX_DISCARD_SECTORS; offset < VirtioBlk.CONFIG_SIZE; offset += 4) {
            assertEquals(0, device.readConfig(offset, 4), "offset " + offset);
        }
    }

    // 5.2.4 / 5.2.5.2: writeback starts at 1, is driver-writable only with CONFIG_WCE, and starts at 0 when
    // CONFIG_WCE is negotiated without FLUSH.
    @Test
    void writebackFollowsConfigWce() {
        VirtioBlkDevice device = device(1, 256, false);
        long version = VirtioFeatures.VERSION_1;
        device.acceptsFeatures(version | VirtioBlk.F_FLUSH | VirtioBlk.F_CONFIG_WCE);
        assertEquals(1, device.readConfig(VirtioBlk.CFG_WRITEBACK, 1));
        assertTrue(device.writeCache());
        device.writeConfig(VirtioBlk.CFG_WRITEBACK, 1, 0);
        assertEquals(0, device.readConfig(VirtioBlk.CFG_WRITEBACK, 1));
        assertFalse(device.writeCache());
        device.writeConfig(VirtioBlk.CFG_WRITEBACK, 1, 1);
        assertEquals(1, device.readConfig(VirtioBlk.CFG_WRITEBACK, 1));
        device.writeConfig(VirtioBlk.CFG_WRITEBACK, 2, 0); // wrong width: ignored
        assertEquals(1, device.readConfig(VirtioBlk.CFG_WRITEBACK, 1));

        device.acceptsFeatures(version | VirtioBlk.F_CONFIG_WCE);
        assertEquals(0, device.readConfig(VirtioBlk.CFG_WRITEBACK, 1), "CONFIG_WCE without FLUSH");
        assertFalse(device.writeCache());

        device.acceptsFeatures(version | VirtioBlk.F_FLUSH);
        device.writeConfig(VirtioBlk.CFG_WRITEBACK, 1, 0);
        assertTrue(device.writeCache(), "without CONFIG_WCE the field is read-only");
        assertEquals(1, device.readConfig(VirtioBlk.CFG_WRITEBACK, 1));

        device.acceptsFeatures(version);
        assertFalse(device.writeCache(), "no FLUSH, no CONFIG_WCE: writethrough");
    }

    @Test
    void byteReadsComposeToWideReads() {
        VirtioBlkDevice device = device(2, 64, false);
        for (int offset = 0; offset + 8 <= VirtioBlk.CONFIG_SIZE; offset += 2) {
            long composed = 0;
            for (int i = 7; i >= 0; i--) {
                composed = (composed << 8) | device.readConfig(offset + i, 1);
            }
            assertEquals(device.readConfig(offset, 8), composed, "offset " + offset);
        }
    }

    @Test
    void accessesOutsideTheStructureOrOfOddWidthReadZero() {
        VirtioBlkDevice device = device(1, 256, false);
        assertEquals(0, device.readConfig(VirtioBlk.CONFIG_SIZE, 1));
        assertEquals(0, device.readConfig(VirtioBlk.CONFIG_SIZE - 2, 4));
        assertEquals(0, device.readConfig(-1, 1));
        assertEquals(0, device.readConfig(VirtioBlk.CFG_BLK_SIZE, 3));
        assertEquals(0, device.readConfig(Integer.MAX_VALUE, 8));
    }

    @Test
    void otherConfigWritesAreIgnored() {
        VirtioBlkDevice device = device(1, 256, false);
        device.acceptsFeatures(VirtioFeatures.VERSION_1 | VirtioBlk.F_FLUSH | VirtioBlk.F_CONFIG_WCE);
        device.writeConfig(VirtioBlk.CFG_CAPACITY, 8, 7);
        device.writeConfig(VirtioBlk.CFG_NUM_QUEUES, 2, 9);
        assertEquals(SIZE / 512, device.readConfig(VirtioBlk.CFG_CAPACITY, 8));
        assertEquals(1, device.readConfig(VirtioBlk.CFG_NUM_QUEUES, 2));
    }

    /**
     * 2.7.10.2 and 3.1.1: a notification before DRIVER_OK (or for a queue the device does not have) is
     * spurious. The device counts it for its queue and does nothing else: no request reaches the backend, no
     * I/O thread is asked to run anything, and the device activates and serves requests normally afterwards.
     */
    @Test
    void notifyBeforeActivationIsIgnored() throws Exception {
        RecordingBackend backend = new RecordingBackend(new MemoryBackend(1 << 20, false));
        CountingThread thread = new CountingThread(new EventLoopThread("test-spurious"));
        VirtioBlkDevice device = new VirtioBlkDevice(BlkDeviceSpec.of("c", backend, false, 2, 64, new byte[0],
                List.of(thread)));
        MmioTransport transport = null;
        try {
            device.queueNotify(0);
            device.queueNotify(1);
            device.queueNotify(1);
            device.queueNotify(2); // no such queue
            device.queueNotify(-1);
            device.queueNotify(Integer.MAX_VALUE);
            assertEquals(0, thread.uses.get(), "the I/O thread was asked to run something");
            assertEquals(0, backend.reads.get() + backend.writes.get() + backend.flushes.get());
            assertEquals(1, device.queueCounters().get(0).availNotifications());
            assertEquals(2, device.queueCounters().get(1).availNotifications());
            assertEquals(0, device.queueCounters().get(0).requests() + device.queueCounters().get(1).requests());

            transport = new MmioTransport(device, OffHeapGuestMemory.allocate(4 << 20), new VirtqueueFactoryComponent());
            RawRingGuest guest = new RawRingGuest(transport.port()).init(-1L, 2, 64);
            assertEquals(0, guest.status() & DeviceStatus.DEVICE_NEEDS_RESET);
            byte[] data = new byte[4096];
            java.util.Arrays.fill(data, (byte) 0x3c);
            Duration timeout = Duration.ofSeconds(10);
            assertEquals(VirtioBlk.S_OK, guest.request(1, VirtioBlk.T_OUT, 8, data, 0, timeout).status());
            RawRingGuest.Completed read = guest.request(1, VirtioBlk.T_IN, 8, null, 4096, timeout);
            assertEquals(VirtioBlk.S_OK, read.status());
            assertArrayEquals(data, java.util.Arrays.copyOf(read.data(), 4096));
            assertTrue(thread.uses.get() > 0, "activation registered the queues with the I/O thread");
        } finally {
            if (transport != null) {
                transport.close();
            }
            thread.close();
        }
    }

    /** An I/O thread that counts what the device asks of it. */
    private static final class CountingThread extends ForwardingIoThread {
        final AtomicInteger uses = new AtomicInteger();

        CountingThread(IoThread inner) {
            super(inner);
        }

        @Override
        public IoSource register(String name, Runnable handler) {
            uses.incrementAndGet();
            return delegate.register(name, handler);
        }

        @Override
        public void execute(Runnable task) {
            uses.incrementAndGet();
            delegate.execute(task);
        }
    }
}
