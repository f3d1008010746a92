package io.kickplug.api.virtio;

/**
 * One buffer a driver puts into a chain.
 *
 * @param address guest physical address
 * @param length length in bytes (unsigned 32-bit)
 * @param deviceWritable true for a buffer the device writes (VIRTQ_DESC_F_WRITE)
 */
public record BufferSpec(long address, int length, boolean deviceWritable) {

    public static BufferSpec readable(long address, int length) {
        return new BufferSpec(address, length, false);
    }

    public static BufferSpec writable(long address, int length) {
        return new BufferSpec(address, length, true);
    }
}
