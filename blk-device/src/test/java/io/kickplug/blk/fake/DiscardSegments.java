package io.kickplug.blk.fake;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Builds the segment arrays of DISCARD, WRITE_ZEROES and SECURE_ERASE requests (VIRTIO 1.2 section 5.2.6:
 * le64 sector, le32 num_sectors, le32 flags).
 */
public final class DiscardSegments {

    private final ByteBuffer bytes;

    private DiscardSegments(int count) {
        bytes = ByteBuffer.allocate(16 * count).order(ByteOrder.LITTLE_ENDIAN);
    }

    public static DiscardSegments of(int count) {
        return new DiscardSegments(count);
    }

    public DiscardSegments add(long sector, int numSectors, int flags) {
        bytes.putLong(sector).putInt(numSectors).putInt(flags);
        return this;
    }

    public byte[] bytes() {
        return bytes.array().clone();
    }

    /** One segment. */
    public static byte[] one(long sector, int numSectors, int flags) {
        return of(1).add(sector, numSectors, flags).bytes();
    }
}
