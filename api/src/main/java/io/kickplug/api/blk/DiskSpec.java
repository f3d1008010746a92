package io.kickplug.api.blk;

import io.kickplug.api.transport.TransportKind;
import java.util.List;

/**
 * What to attach.
 *
 * @param name unique disk name (letters, digits, '-', '_', '.')
 * @param backend backend kind and size or file
 * @param transport the transport the device sits behind
 * @param numQueues virtqueues (1 to {@link #MAX_QUEUES})
 * @param queueSize virtqueue size (a power of two, 2 to 32768)
 * @param ioThreads I/O threads serving the queues
 * @param mapping which queues each I/O thread serves (QEMU's iothread-vq-mapping): entry {@code i} lists the
 *     queues of I/O thread {@code i}; every queue exactly once. Empty: round-robin.
 * @param serial GET_ID answer (at most 20 bytes), or {@code null} for one derived from the name
 * @param trackedLock the lock of the tracked-requests list
 * @param workers threads of the per-disk worker pool that runs blocking backend calls (file backend)
 * @param guestMemoryBytes size of the simulated guest's memory for in-process transports
 */
public record DiskSpec(String name, BackendSpec backend, TransportKind transport, int numQueues, int queueSize,
        int ioThreads, List<List<Integer>> mapping, String serial, TrackedLockKind trackedLock, int workers,
        long guestMemoryBytes) {

    public static final int MAX_QUEUES = 64;
    public static final int DEFAULT_QUEUE_SIZE = 256;
    public static final int DEFAULT_WORKERS = 8;
    public static final long DEFAULT_GUEST_MEMORY = 64L << 20;

    public DiskSpec {
        mapping = mapping == null ? List.of() : List.copyOf(mapping.stream().map(List::copyOf).toList());
        trackedLock = trackedLock == null ? TrackedLockKind.MUTEX : trackedLock;
    }

    /** The foundation's form: round-robin mapping, mutex tracked lock, default workers. */
    public DiskSpec(String name, BackendSpec backend, TransportKind transport, int numQueues, int queueSize,
            int ioThreads, String serial, long guestMemoryBytes) {
        this(name, backend, transport, numQueues, queueSize, ioThreads, List.of(), serial, TrackedLockKind.MUTEX,
                DEFAULT_WORKERS, guestMemoryBytes);
    }

    /** A memory-backed disk on virtio-mmio with one queue and one I/O thread. */
    public static DiskSpec memory(String name, long sizeBytes) {
        return new DiskSpec(name, new BackendSpec("memory", null, sizeBytes, false), TransportKind.MMIO, 1,
                DEFAULT_QUEUE_SIZE, 1, null, DEFAULT_GUEST_MEMORY);
    }

    /** A raw image file on virtio-mmio with one queue and one I/O thread. */
    public static DiskSpec file(String name, String path, boolean readOnly) {
        return new DiskSpec(name, new BackendSpec("file", path, 0, readOnly), TransportKind.MMIO, 1,
                DEFAULT_QUEUE_SIZE, 1, null, DEFAULT_GUEST_MEMORY);
    }

    public DiskSpec withBackend(BackendSpec b) {
        return new DiskSpec(name, b, transport, numQueues, queueSize, ioThreads, mapping, serial, trackedLock,
                workers, guestMemoryBytes);
    }

    public DiskSpec withTransport(TransportKind t) {
        return new DiskSpec(name, backend, t, numQueues, queueSize, ioThreads, mapping, serial, trackedLock,
                workers, guestMemoryBytes);
    }

    public DiskSpec withQueues(int queues, int size) {
        return new DiskSpec(name, backend, transport, queues, size, ioThreads, mapping, serial, trackedLock,
                workers, guestMemoryBytes);
    }

    /** I/O threads and the queue mapping (empty for round-robin). */
    public DiskSpec withIoThreads(int threads, List<List<Integer>> map) {
        return new DiskSpec(name, backend, transport, numQueues, queueSize, threads, map, serial, trackedLock,
                workers, guestMemoryBytes);
    }

    public DiskSpec withSerial(String s) {
        return new DiskSpec(name, backend, transport, numQueues, queueSize, ioThreads, mapping, s, trackedLock,
                workers, guestMemoryBytes);
    }

    public DiskSpec withTrackedLock(TrackedLockKind k) {
        return new DiskSpec(name, backend, transport, numQueues, queueSize, ioThreads, mapping, serial, k, workers,
                guestMemoryBytes);
    }

    public DiskSpec withWorkers(int n) {
        return new DiskSpec(name, backend, transport, numQueues, queueSize, ioThreads, mapping, serial, trackedLock,
                n, guestMemoryBytes);
    }

    public DiskSpec withGuestMemory(long bytes) {
        return new DiskSpec(name, backend, transport, numQueues, queueSize, ioThreads, mapping, serial, trackedLock,
                workers, bytes);
    }
}
