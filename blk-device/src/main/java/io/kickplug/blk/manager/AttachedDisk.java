package io.kickplug.blk.manager;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.memory.MemoryLease;
import io.kickplug.api.transport.TransportInstance;
import io.kickplug.blk.device.VirtioBlkDevice;
import io.kickplug.blk.notify.NotifierRegistry;
import java.util.List;

/**
 * One disk attached to a {@link DiskRegistry} and everything it owns: its spec (as it is attached again after a
 * live change), backend, device, I/O threads, transport, strategy-change listener and guest-memory lease.
 */
record AttachedDisk(DiskSpec spec, BlockBackend backend, VirtioBlkDevice device, List<IoThread> threads,
        TransportInstance transport, NotifierRegistry.Listener listener, MemoryLease memoryLease) {

    DiskInfo info() {
        return new DiskInfo(spec.name(), backend.size(), backend.kind(), device.readOnly(), transport.kind(),
                spec.numQueues(), spec.queueSize(), spec.ioThreads(), transport.deviceStatus(),
                device.stats().requestsCompleted(), device.stats().requestsInFlight(), spec.backend().path(),
                device.mapping().asLists(), device.trackedRequests().kind(), device.ring());
    }

    /** This disk with {@code next} as the spec it is attached again from (after a live change). */
    AttachedDisk withSpec(DiskSpec next) {
        return new AttachedDisk(next, backend, device, threads, transport, listener, memoryLease);
    }
}
