package io.kickplug.api.blk;

import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.AvailEventMode;
import io.kickplug.api.virtio.RingFormat;
import java.util.ArrayList;
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
 * @param ring the virtqueue format the device offers (packed: VIRTIO_F_RING_PACKED, VIRTIO 1.2 section 2.8);
 *     {@code null} is split
 * @param availEvent when a split ring publishes avail_event with EVENT_IDX (section 2.7.10): on re-enabling
 *     notifications (Linux vhost) or after every pop (QEMU's 2014 virtio-blk); {@code null} is
 *     {@link AvailEventMode#ENABLE}
 */
public record DiskSpec(String name, BackendSpec backend, TransportKind transport, int numQueues, int queueSize,
        int ioThreads, List<List<Integer>> mapping, String serial, TrackedLockKind trackedLock, int workers,
        long guestMemoryBytes, RingFormat ring, AvailEventMode availEvent) {

    public static final int MAX_QUEUES = 64;
    public static final int DEFAULT_QUEUE_SIZE = 256;
    public static final int DEFAULT_WORKERS = 8;
    public static final long DEFAULT_GUEST_MEMORY = 64L << 20;

    public DiskSpec {
        mapping = mapping == null ? List.of() : List.copyOf(mapping.stream().map(List::copyOf).toList());
        trackedLock = trackedLock == null ? TrackedLockKind.MUTEX : trackedLock;
        ring = ring == null ? RingFormat.SPLIT : ring;
        availEvent = availEvent == null ? AvailEventMode.ENABLE : availEvent;
    }

    /** A disk that publishes avail_event as Linux vhost does (the form before {@link #availEvent}). */
    public DiskSpec(String name, BackendSpec backend, TransportKind transport, int numQueues, int queueSize,
            int ioThreads, List<List<Integer>> mapping, String serial, TrackedLockKind trackedLock, int workers,
            long guestMemoryBytes, RingFormat ring) {
        this(name, backend, transport, numQueues, queueSize, ioThreads, mapping, serial, trackedLock, workers,
                guestMemoryBytes, ring, AvailEventMode.ENABLE);
    }

    /** A disk with split rings (the form before the packed ring). */
    public DiskSpec(String name, BackendSpec backend, TransportKind transport, int numQueues, int queueSize,
            int ioThreads, List<List<Integer>> mapping, String serial, TrackedLockKind trackedLock, int workers,
            long guestMemoryBytes) {
        this(name, backend, transport, numQueues, queueSize, ioThreads, mapping, serial, trackedLock, workers,
                guestMemoryBytes, RingFormat.SPLIT);
    }

    /**
     * Parses a byte count as users write it in the shell and in configurations: digits with an optional binary
     * suffix K, M, G or T (case-insensitive), e.g. "64M", "4096".
     *
     * @throws IllegalArgumentException with a one-line message for anything else
     */
    public static long parseSize(String text) {
        String t = text == null ? "" : text.trim();
        if (t.isEmpty()) {
            throw invalidSize(text);
        }
        int unit = "KMGT".indexOf(Character.toUpperCase(t.charAt(t.length() - 1)));
        int shift = unit < 0 ? 0 : 10 * (unit + 1);
        String digits = unit < 0 ? t : t.substring(0, t.length() - 1);
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw invalidSize(text);
        }
        long value;
        try {
            value = Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid size '" + text + "': larger than 8 EiB");
        }
        if (value > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("invalid size '" + text + "': larger than 8 EiB");
        }
        return value << shift;
    }

    private static IllegalArgumentException invalidSize(String text) {
        return new IllegalArgumentException("invalid size '" + text
                + "': expected bytes with an optional K, M, G or T suffix");
    }

    /**
     * Parses a {@link #mapping} as users write it (QEMU's iothread-vq-mapping): "0,2;1,3", entry {@code i} the
     * queues of I/O thread {@code i} separated by ','; blank gives the empty list (round-robin). Whether every
     * queue appears once is checked at attach, against the queue count.
     *
     * @throws IllegalArgumentException naming the text and the bad entry
     */
    public static List<List<Integer>> parseMapping(String text) {
        List<List<Integer>> mapping = new ArrayList<>();
        if (text == null || text.isBlank()) {
            return mapping;
        }
        String[] entries = text.split(";", -1);
        for (int t = 0; t < entries.length; t++) {
            if (entries[t].isBlank()) {
                throw new IllegalArgumentException("'" + text + "': I/O thread " + t
                        + " has no queues (expected e.g. \"0,2;1,3\")");
            }
            List<Integer> queues = new ArrayList<>();
            for (String q : entries[t].split(",", -1)) {
                String digits = q.trim();
                if (digits.isEmpty() || digits.length() > 5 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
                    throw new IllegalArgumentException("'" + text + "': '" + digits
                            + "' is not a queue number (expected e.g. \"0,2;1,3\")");
                }
                queues.add(Integer.parseInt(digits));
            }
            mapping.add(queues);
        }
        return mapping;
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
                workers, guestMemoryBytes, ring, availEvent);
    }

    public DiskSpec withTransport(TransportKind t) {
        return new DiskSpec(name, backend, t, numQueues, queueSize, ioThreads, mapping, serial, trackedLock,
                workers, guestMemoryBytes, ring, availEvent);
    }

    public DiskSpec withQueues(int queues, int size) {
        return new DiskSpec(name, backend, transport, queues, size, ioThreads, mapping, serial, trackedLock,
                workers, guestMemoryBytes, ring, availEvent);
    }

    /** I/O threads and the queue mapping (empty for round-robin). */
    public DiskSpec withIoThreads(int threads, List<List<Integer>> map) {
        return new DiskSpec(name, backend, transport, numQueues, queueSize, threads, map, serial, trackedLock,
                workers, guestMemoryBytes, ring, availEvent);
    }

    public DiskSpec withSerial(String s) {
        return new DiskSpec(name, backend, transport, numQueues, queueSize, ioThreads, mapping, s, trackedLock,
                workers, guestMemoryBytes, ring, availEvent);
    }

    public DiskSpec withTrackedLock(TrackedLockKind k) {
        return new DiskSpec(name, backend, transport, numQueues, queueSize, ioThreads, mapping, serial, k, workers,
                guestMemoryBytes, ring, availEvent);
    }

    public DiskSpec withWorkers(int n) {
        return new DiskSpec(name, backend, transport, numQueues, queueSize, ioThreads, mapping, serial, trackedLock,
                n, guestMemoryBytes, ring, availEvent);
    }

    public DiskSpec withRing(RingFormat r) {
        return new DiskSpec(name, backend, transport, numQueues, queueSize, ioThreads, mapping, serial, trackedLock,
                workers, guestMemoryBytes, r, availEvent);
    }

    public DiskSpec withGuestMemory(long bytes) {
        return new DiskSpec(name, backend, transport, numQueues, queueSize, ioThreads, mapping, serial, trackedLock,
                workers, bytes, ring, availEvent);
    }

    /** When the split rings publish avail_event (after every pop, or on Linux vhost's re-enable). */
    public DiskSpec withAvailEvent(AvailEventMode mode) {
        return new DiskSpec(name, backend, transport, numQueues, queueSize, ioThreads, mapping, serial, trackedLock,
                workers, guestMemoryBytes, ring, mode);
    }
}
