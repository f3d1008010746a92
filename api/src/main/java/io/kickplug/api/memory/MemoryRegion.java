package io.kickplug.api.memory;

/**
 * One region of guest physical memory.
 *
 * @param guestAddress first guest physical address of the region
 * @param size length in bytes, at least 1
 */
public record MemoryRegion(long guestAddress, long size) {
    public MemoryRegion {
        if (size <= 0) {
            throw new IllegalArgumentException("region size must be positive: " + size);
        }
        if (Long.compareUnsigned(guestAddress + size - 1, guestAddress) < 0) {
            throw new AddressOverflowException(guestAddress, size);
        }
    }

    /** Last address of the region, inclusive. */
    public long lastAddress() {
        return guestAddress + size - 1;
    }
}
