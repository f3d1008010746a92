package io.kickplug.api.virtio;

/**
 * Where a split virtqueue lives in guest memory (section 2.7): the descriptor table (16-byte aligned),
 * the driver area or available ring (2-byte aligned) and the device area or used ring (4-byte aligned).
 *
 * @param size queue size, a power of two from 1 to 32768
 */
public record QueueLayout(int size, long descTable, long availRing, long usedRing) {

    /** The largest split virtqueue size (section 2.7: Queue Size is a power of 2, at most 32768). */
    public static final int MAX_SIZE = 32768;

    /** Whether {@code size} is a split virtqueue size: a power of two from 1 to {@link #MAX_SIZE} (section 2.7). */
    public static boolean isValidSize(int size) {
        return size >= 1 && size <= MAX_SIZE && Integer.bitCount(size) == 1;
    }

    /** Bytes of the descriptor table: 16 per entry (section 2.7.5). */
    public static long descTableBytes(int size) {
        return 16L * size;
    }

    /** Bytes of the available ring: flags, idx, ring[size], used_event (section 2.7.6). */
    public static long availRingBytes(int size) {
        return 6L + 2L * size;
    }

    /** Bytes of the used ring: flags, idx, ring[size] of 8-byte elements, avail_event (section 2.7.8). */
    public static long usedRingBytes(int size) {
        return 6L + 8L * size;
    }

    /** A contiguous layout starting at {@code base} (16-byte aligned), each part aligned as required. */
    public static QueueLayout contiguous(int size, long base) {
        long avail = base + descTableBytes(size);
        long used = (avail + availRingBytes(size) + 3) & ~3L;
        return new QueueLayout(size, base, avail, used);
    }

    /** Bytes {@link #contiguous} needs. */
    public static long contiguousBytes(int size) {
        long avail = descTableBytes(size);
        long used = (avail + availRingBytes(size) + 3) & ~3L;
        return used + usedRingBytes(size);
    }
}
