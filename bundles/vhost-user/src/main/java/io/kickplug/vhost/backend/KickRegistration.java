package io.kickplug.vhost.backend;

import io.kickplug.api.virtio.KickDescriptors;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.vhost.protocol.Fds;
import java.io.Closeable;
import java.io.FileDescriptor;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;

/**
 * Where one connection's kick descriptors are watched (issue 12). A device that waits on kick descriptors itself
 * ({@link VirtioDevice#waitsOnKickDescriptors()}, Kickplug's block device on its event-loop I/O threads) gets the
 * running queues' kick descriptors with each activation ({@link #descriptors}), and its I/O threads poll them with
 * {@link JunixDescriptorPoller}: one wake-up per kick, as in QEMU's AioContext. The device holds them only between
 * activation and reset, so a kick descriptor is replaced or closed only while the device is stopped. Any other
 * device gets kicks from a {@link KickPoller} thread, which hands them to {@code kicked}.
 *
 * <p>Threading: {@link #register}, {@link #unregister} and {@link #descriptors} run on the connection's message
 * thread; kicks arrive on the device's I/O threads (or the {@link KickPoller} thread).
 */
final class KickRegistration implements Closeable {

    /** Reads the kicks when the device does not wait on them itself; {@code null} otherwise. */
    private final KickPoller poller;
    /** Kicks the device's I/O threads read (when {@link #poller} is {@code null}). */
    private final AtomicLong kicksRead = new AtomicLong();

    KickRegistration(String name, VirtioDevice device, IntConsumer kicked) throws IOException {
        this.poller = device.waitsOnKickDescriptors() ? null
                : new KickPoller("kickplug-vhost-" + name + "-kick", kicked);
    }

    /**
     * Whether the device's I/O threads watch the running queues' kick descriptors: a running queue's
     * descriptor may then be replaced only after the device stopped.
     */
    boolean deviceWaits() {
        return poller == null;
    }

    /** Watches {@code fd} as the kick of queue {@code queue} (the kick poller's, if any). */
    void register(int queue, FileDescriptor fd) {
        if (poller != null) {
            // register() returns once the poll thread uses the new descriptor, so the old one may be closed.
            poller.register(queue, fd);
        }
    }

    /** The kick poller (if any) stops watching the ring's kick; the device's I/O threads do once it is reset. */
    void unregister(int queue) {
        if (poller != null) {
            poller.unregister(queue);
        }
    }

    /** Stops watching ring {@code r}'s kick descriptor (if any) and closes it. */
    void close(Vring r) {
        if (r.kick != null) {
            unregister(r.index);
            Fds.close(r.kick);
            r.kick = null;
        }
    }

    /**
     * The kick descriptors of the queues in {@code runningNow} for the device's activation, or {@code null} when
     * the kick poller reads them.
     */
    KickDescriptors descriptors(Vring[] rings, boolean[] runningNow) {
        if (poller != null) {
            return null;
        }
        List<FileDescriptor> fds = new ArrayList<>(Collections.nCopies(rings.length, (FileDescriptor) null));
        for (Vring r : rings) {
            if (runningNow[r.index]) {
                fds.set(r.index, r.kick);
            }
        }
        return new KickDescriptors(Collections.unmodifiableList(fds), JunixDescriptorPoller.INSTANCE,
                q -> kicksRead.incrementAndGet());
    }

    /** Kicks read so far, by the kick poller or the device's I/O threads. */
    long kicksSeen() {
        return poller != null ? poller.kicksSeen() : kicksRead.get();
    }

    /** Stops the kick poller's thread, if any. */
    @Override
    public void close() {
        if (poller != null) {
            poller.close();
        }
    }
}
