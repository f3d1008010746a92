package io.kickplug.api.blk;

import io.kickplug.api.transport.TransportKind;

/**
 * What to attach.
 *
 * @param name unique disk name (letters, digits, '-', '_', '.')
 * @param backend backend kind and size or file
 * @param transport the transport the device sits behind
 * @param numQueues virtqueues (1 to {@link #MAX_QUEUES})
 * @param queueSize virtqueue size (a power of two, 2 to 32768)
 * @param ioThreads I/O threads serving the queues
 * @param serial GET_ID answer (at most 20 bytes), or {@code null} for one derived from the name
 * @param guestMemoryBytes size of the simulated guest's memory for in-process transports
 */
public record DiskSpec(String name, BackendSpec backend, TransportKind transport, int numQueues, int queueSize,
        int ioThreads, String serial, long guestMemoryBytes) {

    public static final int MAX_QUEUES = 64;
    public static final int DEFAULT_QUEUE_SIZE = 256;
    public static final long DEFAULT_GUEST_MEMORY = 64L << 20;

    /** A memory-backed disk on virtio-mmio with one queue and one I/O thread. */
    public static DiskSpec memory(String name, long sizeBytes) {
        return new DiskSpec(name, new BackendSpec("memory", null, sizeBytes, false), TransportKind.MMIO, 1,
                DEFAULT_QUEUE_SIZE, 1, null, DEFAULT_GUEST_MEMORY);
    }
}
