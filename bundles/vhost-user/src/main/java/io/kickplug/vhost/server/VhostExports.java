package io.kickplug.vhost.server;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.transport.ExportStatus;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtqueueFactory;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The vhost-user exports of attached disks, at most one per disk. Thread-safe. */
public final class VhostExports implements AutoCloseable {

    private static final Logger LOG = System.getLogger(VhostExports.class.getName());

    private final DiskManager disks;
    private final VirtqueueFactory queueFactory;
    private final GuestMemoryFactory memoryFactory;
    private final Map<String, Export> exports = new LinkedHashMap<>();
    /** The dirty-log marks sessions left uncollected, for the exports' next sessions. */
    private final PendingMarks pendingMarks;

    private record Export(VhostUserServer server, VirtioDevice device) {
    }

    public VhostExports(DiskManager disks, VirtqueueFactory queueFactory, GuestMemoryFactory memoryFactory) {
        this(disks, queueFactory, memoryFactory, new PendingMarks());
    }

    /**
     * With the store of pending dirty-log marks the exports share; it outlives them (the vhost-user bundle keeps one
     * while it runs, {@code VhostCommands}), so that an export made again after a bundle update gives its next
     * session the marks the last one left.
     */
    public VhostExports(DiskManager disks, VirtqueueFactory queueFactory, GuestMemoryFactory memoryFactory,
            PendingMarks pendingMarks) {
        this.pendingMarks = pendingMarks;
        this.disks = disks;
        this.queueFactory = queueFactory;
        this.memoryFactory = memoryFactory;
    }

    /**
     * Exports disk {@code disk} as a vhost-user-blk back-end on {@code socket}. A disk exported already on that
     * socket with that many queues (an export its configuration made again, named once more by a start-up script)
     * is answered as it is.
     *
     * @throws DiskException for an unknown disk, a disk already exported elsewhere or with another queue count, a
     *     bad queue count or a socket that cannot be created (one line saying why)
     */
    public synchronized VhostUserServer.Status export(String disk, Path socket, int numQueues) {
        return export(disk, socket.toAbsolutePath().normalize(), -1, numQueues);
    }

    /**
     * Exports disk {@code disk} on the listening Unix socket this process inherited as descriptor {@code fd}
     * ({@link VhostUserServer#inherited}); as {@link #export(String, Path, int)} otherwise.
     */
    public synchronized VhostUserServer.Status exportInherited(String disk, int fd, int numQueues) {
        if (fd < 0) {
            throw new DiskException("descriptor " + fd + " is not a descriptor");
        }
        return export(disk, Path.of("fd:" + fd), fd, numQueues);
    }

    private VhostUserServer.Status export(String disk, Path socket, int fd, int numQueues) {
        Export existing = exports.get(disk);
        if (existing != null) {
            if (existing.server().inheritedFd() == fd && existing.server().socketPath().normalize().equals(socket)
                    && existing.device().queueCount() == numQueues) {
                return existing.server().status();
            }
            throw new DiskException("disk '" + disk + "' is already exported on " + existing.server().socketPath()
                    + " with " + existing.device().queueCount() + " queues");
        }
        if (fd >= 0) {
            for (Map.Entry<String, Export> e : exports.entrySet()) {
                if (e.getValue().server().inheritedFd() == fd) {
                    throw new DiskException("descriptor " + fd + " serves the export of '" + e.getKey() + "' already");
                }
            }
        }
        VirtioDevice device = disks.exportDevice(disk, numQueues);
        try {
            VhostUserServer server = fd >= 0
                    ? VhostUserServer.inherited(disk, fd, device, queueFactory, memoryFactory, pendingMarks)
                    : new VhostUserServer(disk, socket, device, queueFactory, memoryFactory, pendingMarks);
            exports.put(disk, new Export(server, device));
            return server.status();
        } catch (IOException | RuntimeException e) {
            disks.releaseExport(disk, device);
            throw new DiskException("cannot export disk '" + disk + "': " + e.getMessage(), e);
        }
    }

    /** Stops the export of {@code disk}: the front-end is disconnected, the device reset, the socket removed. */
    public synchronized void stop(String disk) {
        Export e = exports.remove(disk);
        if (e == null) {
            throw new DiskException("disk '" + disk + "' is not exported");
        }
        close(disk, e);
    }

    public synchronized List<VhostUserServer.Status> list() {
        List<VhostUserServer.Status> out = new ArrayList<>();
        exports.values().forEach(e -> out.add(e.server().status()));
        return out;
    }

    /** The exports for {@code kp:disks}: disk, socket and connection state. */
    public synchronized List<ExportStatus.Export> exportStatus() {
        List<ExportStatus.Export> out = new ArrayList<>();
        for (VhostUserServer.Status s : list()) {
            out.add(new ExportStatus.Export(s.name(), "vhost-user", s.socket().toString(),
                    s.state().name().toLowerCase(Locale.ROOT)));
        }
        return out;
    }

    /** Dirty logging per export, for {@code kp:stats}. */
    public synchronized List<ExportStatus.DirtyLog> dirtyLogs() {
        List<ExportStatus.DirtyLog> out = new ArrayList<>();
        exports.forEach((disk, e) -> out.add(new ExportStatus.DirtyLog(disk, "vhost-user",
                e.server().logging(), e.server().pagesMarked())));
        return out;
    }

    private void close(String disk, Export e) {
        e.server().close();
        try {
            disks.releaseExport(disk, e.device());
        } catch (RuntimeException ex) {
            LOG.log(Level.DEBUG, "releasing the export of " + disk + ": " + ex.getMessage());
        }
    }

    @Override
    public synchronized void close() {
        exports.forEach(this::close);
        exports.clear();
    }
}
