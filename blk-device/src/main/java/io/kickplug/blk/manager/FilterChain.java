package io.kickplug.blk.manager;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendFilter;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.ForwardingAsyncBackend;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.function.Consumer;

/**
 * What one device reaches its backend through: the backend filters bound now (throttle), in order, in front of
 * the device's view of its backend. When a filter service comes or goes, {@link #rebuild} wraps the view again with
 * the filters bound then and retires the old chain: its wrappers are closed, which lets what they still hold go on
 * to the view (a filter's close on a swap must not fail requests: see {@link BackendFilter}). So the throttle
 * limits are in force again as soon as the throttle bundle is back, and no disk keeps a stopped bundle's objects.
 * Filters never close the view: the device does, through {@link #close}.
 */
final class FilterChain extends ForwardingAsyncBackend {

    private static final Logger LOG = System.getLogger(FilterChain.class.getName());

    private final String disk;
    private final AsyncBlockBackend unclosable;
    private final Consumer<FilterChain> onClose;
    /** The outermost wrapper now (the view itself without filters). */
    private volatile AsyncBlockBackend chain;
    private volatile List<BackendFilter> applied = List.of();
    private boolean closed;

    FilterChain(String disk, AsyncBlockBackend view, List<BackendFilter> filters, Consumer<FilterChain> onClose) {
        super(view);
        this.disk = disk;
        this.unclosable = new Unclosable(view);
        this.onClose = onClose;
        this.chain = wrap(filters);
        this.applied = List.copyOf(filters);
    }

    String disk() {
        return disk;
    }

    /** The filters this chain was last built with. */
    List<BackendFilter> applied() {
        return applied;
    }

    private AsyncBlockBackend wrap(List<BackendFilter> filters) {
        if (filters.isEmpty()) {
            return view; // no filter bound: each request goes straight to the view, one call less
        }
        AsyncBlockBackend b = unclosable;
        for (BackendFilter f : filters) {
            try {
                b = f.wrap(disk, b);
            } catch (RuntimeException e) {
                LOG.log(Level.ERROR, "disk " + disk + ": filter " + f.name() + " failed, left out: " + e);
            }
        }
        return b;
    }

    /** Wraps the view with {@code filters} (when they differ from the applied ones) and retires the old chain. */
    void rebuild(List<BackendFilter> filters) {
        AsyncBlockBackend old;
        synchronized (this) {
            if (closed || filters.equals(applied)) {
                return;
            }
            old = chain;
            chain = wrap(filters);
            applied = List.copyOf(filters);
        }
        // New submissions take the new chain from now on; what the old one holds goes on to the view.
        retire(old);
        LOG.log(Level.INFO, "disk " + disk + ": backend filters now " + filters.stream().map(BackendFilter::name)
                .toList());
    }

    private void retire(AsyncBlockBackend old) {
        if (old == unclosable || old == view) {
            return; // no wrapper of a filter to retire; the view stays open
        }
        try {
            old.unplug();
            old.close();
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "disk " + disk + ": retiring its old filter chain: " + e);
        }
    }

    @Override
    public void submit(BackendIo io) {
        chain.submit(io);
    }

    @Override
    public void unplug() {
        chain.unplug();
    }

    /** The device closes: the filters' wrappers, then the view (the device's worker pool, not the backend). */
    @Override
    public void close() throws IOException {
        AsyncBlockBackend c;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            c = chain;
        }
        onClose.accept(this);
        try {
            if (c != unclosable && c != view) {
                c.close();
            }
        } finally {
            view.close();
        }
    }

    /** The view as the filters get it: their close leaves it open. */
    private static final class Unclosable extends ForwardingAsyncBackend {

        Unclosable(AsyncBlockBackend view) {
            super(view);
        }

        @Override
        public void close() {
            // the device closes the view
        }
    }
}
