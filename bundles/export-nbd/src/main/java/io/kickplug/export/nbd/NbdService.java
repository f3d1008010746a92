package io.kickplug.export.nbd;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskPort;
import io.kickplug.api.transport.ExportStatus;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The NBD server and its exports, what the {@code kp:nbd-*} commands drive (QEMU's {@code nbd-server-start},
 * {@code nbd-server-stop}, {@code block-export-add type=nbd}, {@code block-export-del}): at most one server, any
 * number of exports, each over a {@link DiskPort} of an attached disk. What is made is saved in a {@link Store}
 * (ConfigAdmin in the runtime), so that it comes back when this bundle or the disk manager's comes back;
 * {@link #close} ends everything but keeps what is saved, {@link #stop} and {@link #stopExport} forget it.
 * Thread-safe.
 */
public final class NbdService implements AutoCloseable {

    private static final Logger LOG = System.getLogger(NbdService.class.getName());
    /** How long a saved export waits for its disk to be attached again (after a bundle update, a ring swap). */
    static final long RESTORE_WAIT_MILLIS = 30_000;

    /** Where the server and the exports are kept across restarts of this bundle. */
    public interface Store {
        void saveServer(Listener listener, int maxConnections);

        void deleteServer();

        /** The saved server, or null. */
        SavedServer server();

        void saveExport(SavedExport export);

        void deleteExport(String name);

        List<SavedExport> exports();

        /** A store that keeps nothing. */
        Store NONE = new Store() {
            @Override
            public void saveServer(Listener listener, int maxConnections) {
            }

            @Override
            public void deleteServer() {
            }

            @Override
            public SavedServer server() {
                return null;
            }

            @Override
            public void saveExport(SavedExport export) {
            }

            @Override
            public void deleteExport(String name) {
            }

            @Override
            public List<SavedExport> exports() {
                return List.of();
            }
        };
    }

    public record SavedServer(Listener listener, int maxConnections) {
    }

    public record SavedExport(String name, String disk, boolean writable) {
    }

    /** One export as {@code kp:nbd-list} shows it. */
    public record ExportView(NbdExport.Status status, String uri) {
    }

    private final DiskManager disks;
    private final Store store;
    private final Exports exports = new Exports();
    /** Exports saved whose disks are not attached (yet); restored as they come. Under this. */
    private final List<SavedExport> pending = new ArrayList<>();
    /** Runs what a detach asks for (it may not call the disk manager on the detaching thread), and restores. */
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "kickplug-nbd-service");
        t.setDaemon(true);
        return t;
    });
    private NbdServer server;
    private boolean closed;

    public NbdService(DiskManager disks, Store store) {
        this.disks = disks;
        this.store = store;
    }

    /**
     * Starts the server and the exports saved before (a restart of this bundle or of the disk manager's): those
     * whose disks are attached now at once, the others as soon as their disks are back, for
     * {@value #RESTORE_WAIT_MILLIS} ms.
     */
    public synchronized void restore() {
        SavedServer saved = store.server();
        if (saved == null) {
            return;
        }
        try {
            startServer(saved.listener(), saved.maxConnections());
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.ERROR, "the saved NBD server on " + saved.listener().describe(saved.listener().port())
                    + " could not be started again: " + e.getMessage());
            return;
        }
        pending.addAll(store.exports());
        restorePending();
        if (!pending.isEmpty()) {
            long deadline = System.currentTimeMillis() + RESTORE_WAIT_MILLIS;
            worker.execute(() -> restoreLoop(deadline));
        }
    }

    private void restoreLoop(long deadline) {
        while (true) {
            synchronized (this) {
                if (closed || pending.isEmpty()) {
                    return;
                }
                restorePending();
                if (pending.isEmpty()) {
                    return;
                }
                if (System.currentTimeMillis() > deadline) {
                    for (SavedExport s : pending) {
                        LOG.log(Level.ERROR, "NBD export " + s.name() + ": disk " + s.disk() + " did not come back within "
                                + RESTORE_WAIT_MILLIS + " ms");
                    }
                    pending.clear();
                    return;
                }
            }
            try {
                // The disks come back through ConfigAdmin in another bundle: nothing to wait on but time.
                TimeUnit.MILLISECONDS.sleep(20);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Makes again the pending exports whose disks are attached now. Under this. */
    private void restorePending() {
        for (var it = pending.iterator(); it.hasNext();) {
            SavedExport s = it.next();
            boolean attached;
            try {
                attached = disks.list().stream().anyMatch(d -> d.name().equals(s.disk()));
            } catch (RuntimeException goingAway) {
                return;
            }
            if (!attached) {
                continue;
            }
            it.remove();
            try {
                exportNow(s.disk(), s.name(), s.writable());
                LOG.log(Level.INFO, "NBD export " + s.name() + " of disk " + s.disk() + " made again");
            } catch (RuntimeException e) {
                LOG.log(Level.ERROR, "NBD export " + s.name() + " could not be made again: " + e.getMessage());
            }
        }
    }

    /**
     * Starts the server ({@code kp:nbd-server start}).
     *
     * @param maxConnections at most this many connections at once, 0 for no limit
     * @throws IllegalStateException when a server runs already
     * @throws IOException when the socket cannot be opened
     */
    public synchronized NbdServer.Status start(Listener listener, int maxConnections) throws IOException {
        startServer(listener, maxConnections);
        store.saveServer(listener, maxConnections);
        return server.status();
    }

    private void startServer(Listener listener, int maxConnections) throws IOException {
        if (closed) {
            throw new IllegalStateException("the NBD export bundle is stopping");
        }
        if (server != null) {
            throw new IllegalStateException("an NBD server runs already on " + server.status().address()
                    + " (kp:nbd-server stop first)");
        }
        server = new NbdServer(listener, maxConnections, exports);
    }

    /** Stops the server and ends every export ({@code kp:nbd-server stop}, as QEMU's nbd-server-stop). */
    public synchronized void stop() {
        if (server == null) {
            throw new IllegalStateException("no NBD server runs");
        }
        for (NbdExport e : exports.all()) {
            end(e);
            store.deleteExport(e.name());
        }
        pending.clear();
        server.close();
        server = null;
        store.deleteServer();
    }

    /** The server's status, or null when none runs. */
    public synchronized NbdServer.Status status() {
        return server == null ? null : server.status();
    }

    /**
     * Exports disk {@code disk} as {@code name} ({@code kp:nbd-export}); read-only unless {@code writable}.
     *
     * @throws IllegalStateException when no server runs
     * @throws DiskException for an unknown disk, a name taken, a writable export of a read-only disk
     */
    public synchronized ExportView export(String disk, String name, boolean writable) {
        NbdExport e = exportNow(disk, name, writable);
        store.saveExport(new SavedExport(e.name(), disk, writable));
        return view(e);
    }

    private NbdExport exportNow(String disk, String name, boolean writable) {
        if (server == null) {
            throw new IllegalStateException("no NBD server runs (kp:nbd-server start first)");
        }
        String exportName = name == null || name.isEmpty() ? disk : name;
        checkName(exportName);
        if (exports.contains(exportName)) {
            throw new DiskException("an NBD export named '" + exportName + "' exists already");
        }
        NbdExport[] made = new NbdExport[1];
        DiskPort port = disks.openPort(disk, () -> worker.execute(() -> detached(made[0])));
        if (writable && port.readOnly()) {
            port.close();
            throw new DiskException("disk '" + disk + "' is read-only: it cannot be exported writable");
        }
        NbdExport e = new NbdExport(exportName, disk, writable, port);
        made[0] = e;
        exports.add(e);
        LOG.log(Level.INFO, "NBD export " + exportName + " of disk " + disk + (writable ? " (writable)" : " (read-only)")
                + ": " + server.listener().uri(exportName, server.boundPort()));
        return e;
    }

    /** An export name is a string of at most 4096 bytes without NUL (proto.md "Conventions"). */
    static void checkName(String name) {
        if (name.indexOf('\0') >= 0 || name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > Nbd.MAX_STRING) {
            throw new DiskException("export name '" + name + "' is not an NBD string (no NUL, at most 4096 bytes)");
        }
    }

    /**
     * The disk of {@code e} was detached, or its disk manager went (the port is closed, its requests done): the export
     * ends. Its saved form is kept while the disk is still configured (a bundle update, a ring swap: it comes back
     * with the disk) and forgotten otherwise ({@code kp:detach}).
     */
    private void detached(NbdExport e) {
        if (e == null) {
            return;
        }
        boolean configured;
        try {
            configured = disks.configuredDisks().contains(e.disk());
        } catch (RuntimeException goingAway) {
            configured = true;
        }
        synchronized (this) {
            if (exports.get(e.name()) != e) {
                return; // stopped meanwhile
            }
            exports.remove(e.name());
            e.markClosed();
            if (server != null) {
                server.disconnect(e.name());
            }
            if (configured && !closed) {
                LOG.log(Level.INFO, "NBD export " + e.name() + ": disk " + e.disk() + " went away; the export comes "
                        + "back with it");
                pending.add(new SavedExport(e.name(), e.disk(), e.writable()));
                long deadline = System.currentTimeMillis() + RESTORE_WAIT_MILLIS;
                worker.execute(() -> restoreLoop(deadline));
            } else {
                store.deleteExport(e.name());
                LOG.log(Level.INFO, "NBD export " + e.name() + " ended: disk " + e.disk() + " was detached");
            }
        }
    }

    /** Ends export {@code name} ({@code kp:nbd-export-stop}): its clients are answered and disconnected. */
    public synchronized void stopExport(String name) {
        NbdExport e = exports.get(name);
        if (e == null) {
            if (pending.removeIf(s -> s.name().equals(name))) {
                store.deleteExport(name);
                return;
            }
            throw new DiskException("no NBD export named '" + name + "'");
        }
        end(e);
        store.deleteExport(name);
    }

    /** Ends an export: no new client, its clients' requests in flight answered, then they and the port close. */
    private void end(NbdExport e) {
        exports.remove(e.name());
        e.markClosed();
        if (server != null) {
            server.disconnect(e.name());
        }
        e.port().close();
    }

    public synchronized List<ExportView> list() {
        List<ExportView> out = new ArrayList<>();
        for (NbdExport e : exports.all()) {
            out.add(view(e));
        }
        return out;
    }

    private ExportView view(NbdExport e) {
        boolean multi = server == null || server.multiConn();
        return new ExportView(e.status(multi), server == null ? "" : server.listener().uri(e.name(), server.boundPort()));
    }

    /** The exports for {@code kp:disks}: the disk, "nbd", the URI clients use, connected or listening. */
    public synchronized List<ExportStatus.Export> exportStatus() {
        List<ExportStatus.Export> out = new ArrayList<>();
        for (ExportView v : list()) {
            out.add(new ExportStatus.Export(v.status().disk(), "nbd", v.uri(),
                    v.status().connections() > 0 ? "connected" : "listening"));
        }
        return out;
    }

    /** Ends the server and the exports, keeping what is saved (this bundle or the disk manager's is going). */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            for (NbdExport e : exports.all()) {
                end(e);
            }
            pending.clear();
            if (server != null) {
                server.close();
                server = null;
            }
        }
        worker.shutdownNow();
        try {
            worker.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
