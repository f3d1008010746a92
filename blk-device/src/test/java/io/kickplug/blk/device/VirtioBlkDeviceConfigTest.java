package io.kickplug.blk.device;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.NullBackend;
import java.util.List;
import org.junit.jupiter.api.Test;

class VirtioBlkDeviceConfigTest {

    private static final long SIZE = 3L << 32; // 12 GiB: capacity needs more than 32 bits of bytes

    /** An I/O thread that is never used: these tests do not activate the device. */
    private static final IoThread UNUSED = new IoThread() {
        @Override
        public String name() {
            return "unused";
        }

        @Override
        public IoSource register(String name, Runnable handler) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void execute(Runnable task) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean inLoop() {
            return false;
        }

        @Override
        public long iterations() {
            return 0;
        }

        @Override
        public long cpuTimeNanos() {
            return -1;
        }

        @Override
        public void close() {
        }
    };

    private static VirtioBlkDevice device(int queues, int queueSize, boolean readOnly) {
        return new VirtioBlkDevice("c", new NullBackend(SIZE, false), readOnly, queues, queueSize, new byte[0],
                List.of(UNUSED));
    }

    @Test
    void identifiesAsABlockDevice() {
        VirtioBlkDevice device = device(1, 128, false);
        assertEquals(DeviceIds.BLOCK, device.deviceId());
        assertEquals(1, device.queueCount());
        assertEquals(128, device.maxQueueSize());
        assertEquals(VirtioBlk.CONFIG_SIZE, device.configSize());
    }

    // Section 5.2.3 and 6: VERSION_1 is mandatory; MQ only with several queues, RO only when read-only.
    @Test
    void offersTheSliceFeatures() {
        long base = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_INDIRECT_DESC | VirtioFeatures.RING_EVENT_IDX
                | VirtioBlk.F_SEG_MAX | VirtioBlk.F_BLK_SIZE | VirtioBlk.F_FLUSH;
        assertEquals(base, device(1, 256, false).offeredFeatures());
        assertEquals(base | VirtioBlk.F_MQ, device(4, 256, false).offeredFeatures());
        assertEquals(base | VirtioBlk.F_RO, device(1, 256, true).offeredFeatures());
    }

    @Test
    void readOnlyBackendMakesTheDeviceReadOnly() {
        VirtioBlkDevice device = new VirtioBlkDevice("c", new NullBackend(4096, true), false, 1, 8, new byte[0],
                List.of(UNUSED));
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
        assertEquals(254, device.readConfig(VirtioBlk.CFG_SEG_MAX, 4));
        assertEquals(512, device.readConfig(VirtioBlk.CFG_BLK_SIZE, 4));
        assertEquals(4, device.readConfig(VirtioBlk.CFG_NUM_QUEUES, 2));
        assertEquals(0, device.readConfig(VirtioBlk.CFG_SIZE_MAX, 4));
        assertEquals(0, device.readConfig(VirtioBlk.CFG_WRITEBACK, 1));
        assertEquals(0, device.readConfig(VirtioBlk.CFG_GEOMETRY, 4));
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
    void configWritesAreIgnored() {
        VirtioBlkDevice device = device(1, 256, false);
        device.writeConfig(VirtioBlk.CFG_WRITEBACK, 1, 1);
        device.writeConfig(VirtioBlk.CFG_CAPACITY, 8, 7);
        assertEquals(SIZE / 512, device.readConfig(VirtioBlk.CFG_CAPACITY, 8));
        assertEquals(0, device.readConfig(VirtioBlk.CFG_WRITEBACK, 1));
    }

    @Test
    void notifyBeforeActivationIsIgnored() {
        device(1, 256, false).queueNotify(0); // 2.7.10.2: spurious notifications are harmless
    }
}
