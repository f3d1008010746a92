package io.kickplug.blk.device;

import io.kickplug.api.blk.VirtioBlk;

/**
 * The size-related fields of the configuration space (VIRTIO 1.2 section 5.2.4) that do not depend on the
 * backend's capacity.
 *
 * @param sizeMax {@code size_max} (VIRTIO_BLK_F_SIZE_MAX): largest single data buffer, in bytes
 * @param blkSize {@code blk_size} (VIRTIO_BLK_F_BLK_SIZE): the logical block size
 * @param physicalBlockExp {@code physical_block_exp} (TOPOLOGY): log2 of logical blocks per physical block
 * @param alignmentOffset {@code alignment_offset} (TOPOLOGY): offset of the first aligned logical block
 * @param minIoSize {@code min_io_size} (TOPOLOGY): suggested minimum I/O size, in logical blocks
 * @param optIoSize {@code opt_io_size} (TOPOLOGY): optimal sustained I/O size, in logical blocks (0: none)
 */
public record BlkGeometry(int sizeMax, int blkSize, int physicalBlockExp, int alignmentOffset, int minIoSize,
        int optIoSize) {

    /**
     * The defaults.
     * <ul>
     * <li>{@code size_max} 1 MiB. The device itself handles any buffer size; the limit keeps the guest from
     * building single buffers of many megabytes, so the per-buffer bounce copies of an O_DIRECT file backend
     * stay small. With {@code seg_max} = queue size - 2 a request still carries up to 254 MiB (queue size
     * 256). QEMU does not offer SIZE_MAX at all.</li>
     * <li>logical blocks of 512 bytes, as QEMU, so every 512-byte-sector request is aligned;</li>
     * <li>physical blocks of 4 KiB ({@code physical_block_exp} 3, {@code min_io_size} 8 blocks): a guest
     * then lays out and issues 4 KiB-aligned I/O, which a host page cache and an O_DIRECT file backend
     * serve without read-modify-write. QEMU's default is 512-byte physical blocks.</li>
     * </ul>
     */
    public static final BlkGeometry DEFAULTS = new BlkGeometry(1 << 20, VirtioBlk.SECTOR_SIZE, 3, 0, 8, 0);

    public BlkGeometry {
        if (sizeMax < VirtioBlk.SECTOR_SIZE) {
            throw new IllegalArgumentException("size_max " + sizeMax + " is below one sector");
        }
        if (blkSize < VirtioBlk.SECTOR_SIZE || Integer.bitCount(blkSize) != 1) {
            throw new IllegalArgumentException("blk_size " + blkSize + " is not a power of two of at least 512");
        }
        if (physicalBlockExp < 0 || physicalBlockExp > 15 || alignmentOffset < 0 || alignmentOffset > 255
                || minIoSize < 0 || minIoSize > 0xFFFF || optIoSize < 0) {
            throw new IllegalArgumentException("topology fields out of range: " + this);
        }
    }
}
