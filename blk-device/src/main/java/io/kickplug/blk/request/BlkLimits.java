package io.kickplug.blk.request;

/**
 * The limits a device announces for multi-segment requests (VIRTIO 1.2 section 5.2.4) and enforces when
 * it parses them. Sector counts are in 512-byte sectors; segment counts per request.
 *
 * @param maxDiscardSectors {@code max_discard_sectors}: sectors of one DISCARD segment
 * @param maxDiscardSeg {@code max_discard_seg}: segments of one DISCARD request
 * @param discardSectorAlignment {@code discard_sector_alignment}: a hint for the driver's splitting
 * @param maxWriteZeroesSectors {@code max_write_zeroes_sectors}
 * @param maxWriteZeroesSeg {@code max_write_zeroes_seg}
 * @param writeZeroesMayUnmap {@code write_zeroes_may_unmap}: the unmap flag of WRITE_ZEROES may deallocate
 * @param maxSecureEraseSectors {@code max_secure_erase_sectors}
 * @param maxSecureEraseSeg {@code max_secure_erase_seg}
 * @param secureEraseSectorAlignment {@code secure_erase_sector_alignment}
 */
public record BlkLimits(long maxDiscardSectors, int maxDiscardSeg, long discardSectorAlignment,
        long maxWriteZeroesSectors, int maxWriteZeroesSeg, boolean writeZeroesMayUnmap, long maxSecureEraseSectors,
        int maxSecureEraseSeg, long secureEraseSectorAlignment) {

    /**
     * QEMU's largest request, {@code BDRV_REQUEST_MAX_SECTORS} ({@code INT_MAX >> 9}), which is also its
     * default {@code max-discard-sectors} and {@code max-write-zeroes-sectors}: a segment stays below 2 GiB.
     */
    public static final long QEMU_MAX_SECTORS = Integer.MAX_VALUE >> 9;
    /**
     * Segments per request. QEMU takes one segment only; Linux asks for up to 256
     * ({@code MAX_DISCARD_SEGMENTS}); 32 lets a driver batch while one request stays bounded.
     */
    public static final int DEFAULT_SEGMENTS = 32;

    /** The defaults: QEMU's sector limits, {@link #DEFAULT_SEGMENTS} segments, alignment of one sector. */
    public static final BlkLimits DEFAULTS = new BlkLimits(QEMU_MAX_SECTORS, DEFAULT_SEGMENTS, 1,
            QEMU_MAX_SECTORS, DEFAULT_SEGMENTS, true, QEMU_MAX_SECTORS, DEFAULT_SEGMENTS, 1);

    public BlkLimits {
        checkSectors("max_discard_sectors", maxDiscardSectors);
        checkSectors("max_write_zeroes_sectors", maxWriteZeroesSectors);
        checkSectors("max_secure_erase_sectors", maxSecureEraseSectors);
        checkSectors("discard_sector_alignment", discardSectorAlignment);
        checkSectors("secure_erase_sector_alignment", secureEraseSectorAlignment);
        checkSegments("max_discard_seg", maxDiscardSeg);
        checkSegments("max_write_zeroes_seg", maxWriteZeroesSeg);
        checkSegments("max_secure_erase_seg", maxSecureEraseSeg);
    }

    private static void checkSectors(String field, long value) {
        if (value < 1 || value > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException(field + " " + value + " is not in 1..2^32-1");
        }
    }

    private static void checkSegments(String field, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(field + " " + value + " must be at least 1");
        }
    }

    /** The same limits with {@code write_zeroes_may_unmap} set to {@code mayUnmap}. */
    public BlkLimits withWriteZeroesMayUnmap(boolean mayUnmap) {
        return new BlkLimits(maxDiscardSectors, maxDiscardSeg, discardSectorAlignment, maxWriteZeroesSectors,
                maxWriteZeroesSeg, mayUnmap, maxSecureEraseSectors, maxSecureEraseSeg, secureEraseSectorAlignment);
    }
}
