package io.kickplug.guest.transport;

/** The one shape of a device configuration read both transports accept ({@link VirtioTransportDriver#readConfig}). */
final class ConfigAccess {

    private ConfigAccess() {
    }

    /**
     * Checks a read of {@code width} bytes at {@code offset}: 1, 2 or 4 bytes, naturally aligned (VIRTIO 1.2 section
     * 4.2.2.2 for virtio-mmio's configuration space; the driver keeps to it on virtio-pci as well).
     *
     * @throws IllegalArgumentException for another width or an unaligned offset
     */
    static void check(int offset, int width) {
        if (width != 1 && width != 2 && width != 4) {
            throw new IllegalArgumentException("config access width must be 1, 2 or 4: " + width);
        }
        if (offset < 0 || offset % width != 0) {
            throw new IllegalArgumentException("unaligned config access: offset " + offset + ", width " + width);
        }
    }
}
