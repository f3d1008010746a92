package io.kickplug.api.blk;

import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.RingFormat;
import java.util.List;

/**
 * A snapshot of one attached disk.
 *
 * @param path the image file, or {@code null}
 * @param mapping the queues each I/O thread serves (entry i: I/O thread i)
 * @param trackedLock the tracked-requests lock in use now
 * @param ring the virtqueue format the device offers ({@code null}: split)
 */
public record DiskInfo(String name, long sizeBytes, String backend, boolean readOnly, TransportKind transport,
        int numQueues, int queueSize, int ioThreads, int deviceStatus, long requestsCompleted,
        long requestsInFlight, String path, List<List<Integer>> mapping, TrackedLockKind trackedLock,
        RingFormat ring) {

    public DiskInfo {
        mapping = mapping == null ? List.of() : List.copyOf(mapping.stream().map(List::copyOf).toList());
        ring = ring == null ? RingFormat.SPLIT : ring;
    }

    /** A disk with split rings (the form before the packed ring). */
    public DiskInfo(String name, long sizeBytes, String backend, boolean readOnly, TransportKind transport,
            int numQueues, int queueSize, int ioThreads, int deviceStatus, long requestsCompleted,
            long requestsInFlight, String path, List<List<Integer>> mapping, TrackedLockKind trackedLock) {
        this(name, sizeBytes, backend, readOnly, transport, numQueues, queueSize, ioThreads, deviceStatus,
                requestsCompleted, requestsInFlight, path, mapping, trackedLock, RingFormat.SPLIT);
    }

    public DiskInfo(String name, long sizeBytes, String backend, boolean readOnly, TransportKind transport,
            int numQueues, int queueSize, int ioThreads, int deviceStatus, long requestsCompleted,
            long requestsInFlight) {
        this(name, sizeBytes, backend, readOnly, transport, numQueues, queueSize, ioThreads, deviceStatus,
                requestsCompleted, requestsInFlight, null, List.of(), TrackedLockKind.MUTEX);
    }
}
