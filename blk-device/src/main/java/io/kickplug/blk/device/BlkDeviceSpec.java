package io.kickplug.blk.device;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.blk.notify.NotifierRegistry;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * What a {@link VirtioBlkDevice} is made of. {@link #of} gives the defaults (round-robin mapping, the mutex
 * tracked lock, {@link DiskSpec#DEFAULT_WORKERS} workers, only the immediate notification strategy); the
 * {@code with} methods change one part.
 *
 * @param name the disk name, for thread, source and log names
 * @param backend the disk's bytes
 * @param readOnly refuse writes and offer VIRTIO_BLK_F_RO (also forced when the backend is read-only)
 * @param numQueues 1 to 65535 virtqueues
 * @param queueSize the largest queue size, a power of two from 2 to 32768
 * @param serial the GET_ID answer, at most 20 bytes
 * @param ioThreads the threads that serve the queues, at least one
 * @param mapping which of {@code ioThreads} serves each queue
 * @param trackedLock the lock of the tracked-requests list to start with
 * @param workers threads of the worker pool that runs the calls of a blocking backend
 * @param notifiers the completion-notification strategies the queues choose from by name
 * @param filter what the device puts between itself and the backend's asynchronous view (identity: nothing)
 */
public record BlkDeviceSpec(String name, BlockBackend backend, boolean readOnly, int numQueues, int queueSize,
        byte[] serial, List<IoThread> ioThreads, QueueMapping mapping, TrackedLockKind trackedLock, int workers,
        NotifierRegistry notifiers, UnaryOperator<AsyncBlockBackend> filter) {

    public BlkDeviceSpec(String name, BlockBackend backend, boolean readOnly, int numQueues, int queueSize,
            byte[] serial, List<IoThread> ioThreads, QueueMapping mapping, TrackedLockKind trackedLock, int workers,
            NotifierRegistry notifiers) {
        this(name, backend, readOnly, numQueues, queueSize, serial, ioThreads, mapping, trackedLock, workers, notifiers,
                UnaryOperator.identity());
    }

    /** The device reaches its backend through {@code f} (backend filters: throttling), applied to its async view. */
    public BlkDeviceSpec withFilter(UnaryOperator<AsyncBlockBackend> f) {
        return new BlkDeviceSpec(name, backend, readOnly, numQueues, queueSize, serial, ioThreads, mapping,
                trackedLock, workers, notifiers, f);
    }

    public static BlkDeviceSpec of(String name, BlockBackend backend, boolean readOnly, int numQueues,
            int queueSize, byte[] serial, List<IoThread> ioThreads) {
        return new BlkDeviceSpec(name, backend, readOnly, numQueues, queueSize, serial, ioThreads,
                QueueMapping.of(List.of(), numQueues, Math.max(1, ioThreads.size())), TrackedLockKind.MUTEX,
                DiskSpec.DEFAULT_WORKERS, new NotifierRegistry());
    }

    public BlkDeviceSpec withMapping(QueueMapping m) {
        return new BlkDeviceSpec(name, backend, readOnly, numQueues, queueSize, serial, ioThreads, m, trackedLock,
                workers, notifiers, filter);
    }

    public BlkDeviceSpec withTrackedLock(TrackedLockKind kind) {
        return new BlkDeviceSpec(name, backend, readOnly, numQueues, queueSize, serial, ioThreads, mapping, kind,
                workers, notifiers, filter);
    }

    public BlkDeviceSpec withWorkers(int n) {
        return new BlkDeviceSpec(name, backend, readOnly, numQueues, queueSize, serial, ioThreads, mapping,
                trackedLock, n, notifiers, filter);
    }

    public BlkDeviceSpec withNotifiers(NotifierRegistry n) {
        return new BlkDeviceSpec(name, backend, readOnly, numQueues, queueSize, serial, ioThreads, mapping,
                trackedLock, workers, n, filter);
    }
}
