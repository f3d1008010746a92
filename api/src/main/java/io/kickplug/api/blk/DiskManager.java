package io.kickplug.api.blk;

import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollStatus;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.VirtioDevice;
import java.util.List;
import java.util.Map;
import org.osgi.annotation.versioning.ProviderType;

/** Service that attaches, lists and detaches disks. */
@ProviderType
public interface DiskManager {

    /**
     * Opens the backend, creates the device, its I/O threads and its transport.
     *
     * @throws DiskException on bad input or a backend that cannot be opened; nothing stays attached then
     */
    DiskInfo attach(DiskSpec spec);

    /**
     * As {@link #attach(DiskSpec)}, with the device's I/O threads started by {@code ioThreads} instead of the
     * runtime's I/O thread service, and without recording a configuration (the disk does not outlive the
     * caller's use of it): for benchmarks that run the device on their own loops, such as the simulated
     * guest's virtual-time I/O threads ({@code kp:bench seeds}).
     *
     * @throws DiskException as {@link #attach(DiskSpec)}
     * @throws UnsupportedOperationException when this manager cannot take another I/O thread factory
     */
    default DiskInfo attach(DiskSpec spec, IoThreadFactory ioThreads) {
        throw new UnsupportedOperationException("this disk manager cannot attach with another I/O thread factory");
    }

    /**
     * Resets the device (waiting for in-flight requests to complete with their true status), stops its
     * I/O threads and closes the backend.
     *
     * @throws DiskException when no disk has that name
     */
    void detach(String name);

    List<DiskInfo> list();

    /**
     * CPU time consumed so far by the disk's I/O threads (thread CPU time, summed), or -1 when the JVM cannot
     * measure it. Callers take the difference across a run.
     *
     * @throws DiskException when no disk has that name
     */
    long ioThreadCpuNanos(String name);

    /**
     * Changes the disk's size (a positive multiple of 512): the backend grows or shrinks, the capacity in
     * the configuration space changes and the driver gets a configuration-change notification (VIRTIO 1.2
     * section 5.2.6.2).
     *
     * @throws DiskException for an unknown disk, a bad size or a backend that cannot resize
     */
    DiskInfo resize(String name, long newSizeBytes);

    /**
     * Switches the tracked-requests lock of a disk while it runs; requests in flight finish under the
     * lock they started with.
     *
     * @throws DiskException for an unknown disk
     */
    DiskInfo setTrackedLock(String name, TrackedLockKind kind);

    /**
     * Turns device-side polling of a disk's queues on or off: each queue's I/O thread polls the available
     * ring with the driver's notifications off, in windows sized by the bound
     * {@link io.kickplug.api.poll.PollPolicy}. Kept while no policy is bound, and applied when one is.
     *
     * @param params the windows' parameters, or {@code null} to keep the disk's current ones
     * @throws DiskException for an unknown disk
     */
    PollStatus setPolling(String name, boolean enabled, PollParams params);

    /** @throws DiskException for an unknown disk */
    PollStatus pollStatus(String name);

    /** @throws DiskException when no disk has that name */
    DiskInfo info(String name);

    /**
     * Swaps the virtqueue format a running disk offers (VIRTIO 1.2 sections 2.7 and 2.8): the device is reset
     * (in-flight requests complete), the guest is told it went, and the disk comes back at once offering
     * {@code format}; a simulated guest re-probes, negotiates the new format and resubmits what was in flight.
     * The disk's bytes and guest memory stay (they need the shared-memory files).
     *
     * @throws DiskException for an unknown disk, or when the disk cannot keep its guest memory across the swap
     */
    default DiskInfo setRing(String name, RingFormat format) {
        throw new DiskException("this disk manager cannot swap ring formats");
    }

    /**
     * The disks defined by a ConfigAdmin configuration (every {@link #attach} makes one, {@link #detach}
     * deletes it), attached now or being rebuilt after a bundle serving them came back. A name listed here
     * but not by {@link #list} is a disk on its way back.
     */
    default List<String> configuredDisks() {
        return list().stream().map(DiskInfo::name).toList();
    }

    /**
     * Keeps another bundle's settings of a disk in the disk's configuration, where they outlive that bundle and the
     * runtime (the throttle bundle's limits, {@code throttle.*}): the configuration's properties whose names start
     * with {@code prefix} are replaced by {@code settings}, each key prefixed (none: they are removed). The disk
     * manager writes the settings users change on the disk ({@code notify.strategy}, {@code tracked.lock}, ...) into
     * the same configuration; it makes both kinds of write one at a time, so that neither undoes the other.
     *
     * @param prefix the properties' name prefix, ending in '.', e.g. {@code "throttle."}
     * @return false when the disk has no configuration to keep them in, or this manager keeps none
     * @throws IllegalArgumentException for a prefix that does not end in '.' or names the disk manager's own
     *     properties
     * @since 1.7
     */
    default boolean keepSettings(String disk, String prefix, Map<String, String> settings) {
        return false;
    }

    /**
     * A fresh virtio-blk device over the disk's backend and I/O threads, for a transport that lives outside
     * the disk manager (vhost-user). The caller drives it like a transport (activate, queueNotify, reset);
     * detaching the disk resets it first. Call {@link #releaseExport} when the transport is done with it.
     *
     * @param numQueues the device's queue count (1 to {@link DiskSpec#MAX_QUEUES})
     * @throws DiskException for an unknown disk or a bad queue count
     */
    VirtioDevice exportDevice(String name, int numQueues);

    /** Forgets a device {@link #exportDevice} returned, after its transport reset it. Unknown devices are ignored. */
    void releaseExport(String name, VirtioDevice device);

    /**
     * A port to submit block requests to the disk, as its guest does, for a server that is not a virtio transport
     * (the NBD export). Detaching the disk, or the disk manager going away, closes the port (waiting for its
     * requests in flight) and then runs {@code detached}, once, on the thread that detaches: it must not block nor
     * call the disk manager (hand the work to a thread of one's own). Close the port when done with it.
     *
     * @param detached run when the disk manager closed the port, not when the caller did
     * @throws DiskException for an unknown disk, or a disk manager that has no ports
     * @since 1.7
     */
    default DiskPort openPort(String name, Runnable detached) {
        throw new DiskException("this disk manager cannot open disk ports");
    }

    /**
     * What a simulated guest may touch of the disk's device.
     *
     * @throws DiskException when no disk has that name or it has no in-process transport
     */
    GuestPort port(String name);
}
