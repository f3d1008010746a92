package io.kickplug.api.blk;

import io.kickplug.api.transport.TransportKind;

/** A snapshot of one attached disk. */
public record DiskInfo(String name, long sizeBytes, String backend, boolean readOnly, TransportKind transport,
        int numQueues, int queueSize, int ioThreads, int deviceStatus, long requestsCompleted,
        long requestsInFlight) {
}
