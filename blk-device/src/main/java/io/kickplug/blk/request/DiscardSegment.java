package io.kickplug.blk.request;

import io.kickplug.api.blk.VirtioBlk;

/**
 * One segment of a DISCARD, WRITE_ZEROES or SECURE_ERASE request (VIRTIO 1.2 section 5.2.6:
 * {@code struct virtio_blk_discard_write_zeroes { le64 sector; le32 num_sectors; le32 flags; }}).
 *
 * @param sector first 512-byte sector (unsigned)
 * @param numSectors number of sectors, the unsigned 32-bit field widened
 * @param flags the flags word; bit 0 is {@link #FLAG_UNMAP}, the others are reserved
 */
public record DiscardSegment(long sector, long numSectors, int flags) {

    /** Bytes of one segment in the request. */
    public static final int BYTES = 16;
    /** {@code VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP}: the device may deallocate the range. */
    public static final int FLAG_UNMAP = 1;

    public DiscardSegment {
        if (numSectors < 0 || numSectors > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("num_sectors " + numSectors + " is not an unsigned 32-bit value");
        }
    }

    /** Whether the unmap bit is set. */
    public boolean unmap() {
        return (flags & FLAG_UNMAP) != 0;
    }

    /** Byte offset on the disk; meaningful once the parser has range-checked the segment. */
    public long offset() {
        return sector * VirtioBlk.SECTOR_SIZE;
    }

    /** Length in bytes (at most 2^41 - 512, so it cannot overflow). */
    public long bytes() {
        return numSectors * VirtioBlk.SECTOR_SIZE;
    }
}
