package io.kickplug.blk.manager;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendFilter;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

/**
 * How the disks are bound to services of other bundles that they use while they run: the backend filters
 * (throttle) and the backend factories of asynchronous backends (NBD). When such a service goes, the disks that
 * use it are not left holding a stopped bundle's objects, and when it comes back they use it again, without a
 * device reset:
 *
 * <ul>
 *   <li>every device reaches its backend through a {@link FilterChain}, rebuilt with the filters bound now
 *       whenever one comes or goes (a returning throttle filter applies its limits again);
 *   <li>an asynchronous backend sits in a {@link SwappableBackend}: when its factory goes the disk's requests are
 *       held and those in flight complete, the backend closes; when a factory of that kind comes back the backend
 *       is opened again from the same {@link BackendSpec} (an NBD disk reconnects to the same URI) and the held
 *       requests go to it.
 * </ul>
 *
 * Thread-safe.
 */
final class BackendBindings {

    private static final Logger LOG = System.getLogger(BackendBindings.class.getName());

    /** How long a suspension waits for the requests in flight (an NBD request fails after 10 s without server). */
    static final long SUSPEND_TIMEOUT_MS = 30_000;

    private final List<BackendFilter> filters = new CopyOnWriteArrayList<>();
    /** The filter chains of the disks' devices (a disk's own and its exported ones), per disk. Under this. */
    private final Map<String, List<FilterChain>> chains = new LinkedHashMap<>();
    /** The swappable backends, per disk. Under this. */
    private final Map<String, Slot> slots = new LinkedHashMap<>();
    private volatile long reopenBackoffMaxMs = 1000;

    /** A swappable backend, the spec it is opened from and the factory that opened the backend now. */
    private static final class Slot {
        final String disk;
        final SwappableBackend backend;
        final BackendSpec spec;
        /** The factory whose backend is in now; null while suspended. Under this slot. */
        BackendFactory factory;
        /** The factory a reopen is under way with, or null. Under this slot. */
        BackendFactory reopening;

        Slot(String disk, SwappableBackend backend, BackendSpec spec, BackendFactory factory) {
            this.disk = disk;
            this.backend = backend;
            this.spec = spec;
            this.factory = factory;
        }
    }

    /** What the device of {@code disk} puts in front of its backend's view: a filter chain of the filters now. */
    UnaryOperator<AsyncBlockBackend> chainFor(String disk) {
        // Made and registered under this monitor, as rebuildChains works: a filter arriving meanwhile is either
        // in the list copied here or finds the chain registered.
        return view -> {
            synchronized (this) {
                FilterChain c = new FilterChain(disk, view, List.copyOf(filters), this::closed);
                chains.computeIfAbsent(disk, d -> new ArrayList<>()).add(c);
                return c;
            }
        };
    }

    private synchronized void closed(FilterChain c) {
        List<FilterChain> list = chains.get(c.disk());
        if (list != null) {
            list.remove(c);
            if (list.isEmpty()) {
                chains.remove(c.disk());
            }
        }
    }

    /**
     * The backend {@code factory} opened for {@code disk}, as the disk keeps it: an asynchronous one in a
     * {@link SwappableBackend}, a synchronous one as it is.
     */
    BlockBackend adopt(String disk, BlockBackend opened, BackendFactory factory, BackendSpec spec) {
        if (!(opened instanceof AsyncBlockBackend async)) {
            return opened;
        }
        SwappableBackend s = new SwappableBackend(disk, async);
        synchronized (this) {
            slots.put(disk, new Slot(disk, s, spec, factory));
        }
        return s;
    }

    /**
     * The disk is being taken down while its backend is away: its held requests fail (logged), so its device's
     * reset does not wait for them until its timeout.
     */
    void failHeld(String disk) {
        Slot s;
        synchronized (this) {
            s = slots.get(disk);
        }
        if (s != null) {
            int n = s.backend.failHeld();
            if (n > 0) {
                LOG.log(Level.WARNING, "disk " + disk + ": taken down while its " + s.spec.kind() + " backend's bundle "
                        + "is stopped; " + n + " held requests fail");
            }
        }
    }

    /** The disk was detached (its backend closed). */
    synchronized void forget(String disk) {
        slots.remove(disk);
    }

    void addFilter(BackendFilter filter) {
        filters.add(filter);
        rebuildChains();
    }

    void removeFilter(BackendFilter filter) {
        filters.remove(filter);
        rebuildChains();
    }

    /** Under this monitor: two filter changes at once are applied in order, the later list last. */
    private synchronized void rebuildChains() {
        List<FilterChain> all = new ArrayList<>();
        chains.values().forEach(all::addAll);
        List<BackendFilter> now = List.copyOf(filters);
        for (FilterChain c : all) {
            c.rebuild(now);
        }
    }

    /** The factory's service went: the disks whose backend it opened hold their requests, their backends close. */
    void factoryGone(BackendFactory factory) {
        for (Slot slot : slotsNow()) {
            synchronized (slot) {
                if (slot.reopening == factory) {
                    slot.reopening = null;
                }
                if (slot.factory != factory) {
                    continue;
                }
                slot.factory = null;
                LOG.log(Level.INFO, "disk " + slot.disk + ": its " + slot.spec.kind() + " backend's bundle went; "
                        + "requests are held until it is back");
                slot.backend.suspend(SUSPEND_TIMEOUT_MS);
            }
        }
    }

    /** A factory's service arrived: the suspended disks of its kind open their backends with it again. */
    void factoryArrived(BackendFactory factory) {
        String kind = factory.kind();
        for (Slot slot : slotsNow()) {
            synchronized (slot) {
                if (slot.factory != null || slot.reopening != null || !slot.spec.kind().equals(kind)) {
                    continue;
                }
                slot.reopening = factory;
            }
            Thread t = new Thread(() -> reopen(slot, factory), "kickplug-reopen-" + slot.disk);
            t.setDaemon(true);
            t.start();
        }
    }

    /** Opens the slot's backend with {@code factory} until it works, the factory goes or the disk is detached. */
    private void reopen(Slot slot, BackendFactory factory) {
        long backoff = 50;
        for (int attempt = 1;; attempt++) {
            synchronized (slot) {
                if (slot.reopening != factory || !slot.backend.suspended()) {
                    return;
                }
            }
            BlockBackend b = null;
            try {
                b = factory.open(slot.spec);
                if (!(b instanceof AsyncBlockBackend async)) {
                    throw new IOException("the " + slot.spec.kind() + " backend is no longer asynchronous");
                }
                synchronized (slot) {
                    if (slot.reopening == factory && slot.backend.resume(async)) {
                        slot.factory = factory;
                        slot.reopening = null;
                        return;
                    }
                    if (slot.reopening != factory || !slot.backend.suspended()) {
                        return; // resume closed it
                    }
                }
            } catch (IOException | RuntimeException e) {
                if (b != null) {
                    try {
                        b.close();
                    } catch (IOException | RuntimeException ignored) {
                        // refused anyway
                    }
                }
                LOG.log(attempt == 1 ? Level.WARNING : Level.DEBUG, "disk " + slot.disk + ": cannot open its "
                        + slot.spec.kind() + " backend again (attempt " + attempt + "): " + e.getMessage()
                        + "; retrying");
            }
            try {
                Thread.sleep(backoff);
            } catch (InterruptedException e) {
                return;
            }
            backoff = Math.min(reopenBackoffMaxMs, backoff * 2);
        }
    }

    private synchronized List<Slot> slotsNow() {
        return new ArrayList<>(slots.values());
    }

    /** Whether the disk's backend is away now (its factory's bundle stopped), for {@code kp:disks}. */
    synchronized boolean suspended(String disk) {
        Slot s = slots.get(disk);
        return s != null && s.backend.suspended();
    }
}
