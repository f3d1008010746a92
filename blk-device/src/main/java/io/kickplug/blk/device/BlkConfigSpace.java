package io.kickplug.blk.device;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.blk.request.BlkLimits;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The virtio-blk configuration space (VIRTIO 1.2 section 5.2.4), little-endian, the one place that lays it
 * out. Fields of features the device does not offer read as 0 (5.2.5.2: padding and unused fields are 0).
 */
final class BlkConfigSpace {

    private BlkConfigSpace() {
    }

    /**
     * The whole structure, {@link VirtioBlk#CONFIG_SIZE} bytes.
     *
     * @param offered the device's offered features: they decide which fields are filled
     * @param writeback the {@code writeback} byte (CONFIG_WCE)
     */
    static byte[] layout(long capacitySectors, long offered, boolean writeback, int segMax, int numQueues,
            BlkGeometry geometry, BlkLimits limits) {
        ByteBuffer config = ByteBuffer.allocate(VirtioBlk.CONFIG_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        config.putLong(VirtioBlk.CFG_CAPACITY, capacitySectors);
        if ((offered & VirtioBlk.F_SIZE_MAX) != 0) {
            config.putInt(VirtioBlk.CFG_SIZE_MAX, geometry.sizeMax());
        }
        if ((offered & VirtioBlk.F_SEG_MAX) != 0) {
            config.putInt(VirtioBlk.CFG_SEG_MAX, segMax);
        }
        if ((offered & VirtioBlk.F_BLK_SIZE) != 0) {
            config.putInt(VirtioBlk.CFG_BLK_SIZE, geometry.blkSize());
        }
        if ((offered & VirtioBlk.F_TOPOLOGY) != 0) {
            config.put(VirtioBlk.CFG_PHYSICAL_BLOCK_EXP, (byte) geometry.physicalBlockExp());
            config.put(VirtioBlk.CFG_ALIGNMENT_OFFSET, (byte) geometry.alignmentOffset());
            config.putShort(VirtioBlk.CFG_MIN_IO_SIZE, (short) geometry.minIoSize());
            config.putInt(VirtioBlk.CFG_OPT_IO_SIZE, geometry.optIoSize());
        }
        if ((offered & VirtioBlk.F_CONFIG_WCE) != 0) {
            config.put(VirtioBlk.CFG_WRITEBACK, (byte) (writeback ? 1 : 0));
        }
        // num_queues is meaningful with MQ only; like QEMU it reads the queue count either way.
        config.putShort(VirtioBlk.CFG_NUM_QUEUES, (short) numQueues);
        if ((offered & VirtioBlk.F_DISCARD) != 0) {
            config.putInt(VirtioBlk.CFG_MAX_DISCARD_SECTORS, (int) limits.maxDiscardSectors());
            config.putInt(VirtioBlk.CFG_MAX_DISCARD_SEG, limits.maxDiscardSeg());
            config.putInt(VirtioBlk.CFG_DISCARD_SECTOR_ALIGNMENT, (int) limits.discardSectorAlignment());
        }
        if ((offered & VirtioBlk.F_WRITE_ZEROES) != 0) {
            config.putInt(VirtioBlk.CFG_MAX_WRITE_ZEROES_SECTORS, (int) limits.maxWriteZeroesSectors());
            config.putInt(VirtioBlk.CFG_MAX_WRITE_ZEROES_SEG, limits.maxWriteZeroesSeg());
            config.put(VirtioBlk.CFG_WRITE_ZEROES_MAY_UNMAP, (byte) (limits.writeZeroesMayUnmap() ? 1 : 0));
        }
        if ((offered & VirtioBlk.F_SECURE_ERASE) != 0) {
            config.putInt(VirtioBlk.CFG_MAX_SECURE_ERASE_SECTORS, (int) limits.maxSecureEraseSectors());
            config.putInt(VirtioBlk.CFG_MAX_SECURE_ERASE_SEG, limits.maxSecureEraseSeg());
            config.putInt(VirtioBlk.CFG_SECURE_ERASE_SECTOR_ALIGNMENT, (int) limits.secureEraseSectorAlignment());
        }
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
