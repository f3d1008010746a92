package io.kickplug.blk.device;

import io.kickplug.api.blk.VirtioBlk;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The virtio-blk configuration space (VIRTIO 1.2 section 5.2.4), little-endian. Fields for features the
 * device does not offer read as 0 (5.2.5.2: padding and unused fields are 0).
 */
final class BlkConfigSpace {

    private BlkConfigSpace() {
    }

    /** The whole structure, {@link VirtioBlk#CONFIG_SIZE} bytes. */
    static byte[] layout(long capacitySectors, int segMax, int blkSize, int numQueues) {
        ByteBuffer config = ByteBuffer.allocate(VirtioBlk.CONFIG_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        config.putLong(VirtioBlk.CFG_CAPACITY, capacitySectors);
        config.putInt(VirtioBlk.CFG_SEG_MAX, segMax);
        config.putInt(VirtioBlk.CFG_BLK_SIZE, blkSize);
        config.putShort(VirtioBlk.CFG_NUM_QUEUES, (short) numQueues);
        return config.array();
    }

    /**
     * Reads {@code width} bytes at {@code offset} of {@code config}, little-endian. A width other than 1, 2,
     * 4 or 8, or an access not wholly inside the structure, reads 0.
     */
    static long read(byte[] config, int offset, int width) {
        if (width != 1 && width != 2 && width != 4 && width != 8) {
            return 0;
        }
        if (offset < 0 || offset > config.length - width) {
            return 0;
        }
        long value = 0;
        for (int i = width - 1; i >= 0; i--) {
            value = (value << 8) | (config[offset + i] & 0xFF);
        }
        return value;
    }
}
