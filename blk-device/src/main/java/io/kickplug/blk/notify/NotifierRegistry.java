package io.kickplug.blk.notify;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.notify.CompletionNotifier;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The completion-notification strategies bound now, by name, and the devices that use them. The built-in
 * {@value CompletionNotifier#IMMEDIATE} is always there. When several services carry one name, the one with
 * the highest ranking (then the lowest service id) is used.
 *
 * <p>When a strategy goes away, {@link #remove} returns only once every queue that used it has switched to
 * the fallback on its I/O thread (bounded by {@link #SWITCH_WAIT_NANOS}), so the leaving bundle's code is
 * not called after its service is gone. Thread-safe.
 */
public final class NotifierRegistry {

    private static final Logger LOG = System.getLogger(NotifierRegistry.class.getName());
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,31}");
    /** How long {@link #remove} waits for the queues to leave a strategy. */
    public static final long SWITCH_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    /** A device that must re-resolve its queues' strategies. */
    public interface Listener {

        /**
         * Strategies were bound or unbound: every active queue re-resolves its configured strategy at its
         * next safe point.
         *
         * @return latches counted down once each queue has done so
         */
        List<CountDownLatch> strategiesChanged();
    }

    private record Entry(CompletionNotifier notifier, int ranking, long serviceId) {
    }

    private static final Comparator<Entry> BEST = Comparator.comparingInt(Entry::ranking).reversed()
            .thenComparingLong(Entry::serviceId);

    private final Map<String, List<Entry>> byName = new HashMap<>();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();

    /**
     * Checks a strategy name: 1 to 32 lower-case letters, digits, '.', '_' or '-', starting with a letter
     * or digit.
     *
     * @return the trimmed name
     * @throws DiskException with one line saying what is wrong
     */
    public static String checkName(String name) {
        String n = name == null ? "" : name.trim();
        if (!NAME.matcher(n).matches()) {
            throw new DiskException("invalid strategy name '" + name
                    + "': use 1 to 32 lower-case letters, digits, '.', '_' or '-'");
        }
        return n;
    }

    /**
     * Binds a strategy service. A service without a valid name, or one named
     * {@value CompletionNotifier#IMMEDIATE} (built in), is ignored with a log line.
     */
    public void add(String name, CompletionNotifier notifier, int ranking, long serviceId) {
        String n;
        try {
            n = checkName(name);
        } catch (DiskException e) {
            LOG.log(Level.WARNING, "completion notifier service " + serviceId + " ignored: " + e.getMessage());
            return;
        }
        if (n.equals(CompletionNotifier.IMMEDIATE)) {
            LOG.log(Level.WARNING, "completion notifier service " + serviceId + " ignored: '" + n + "' is built in");
            return;
        }
        synchronized (byName) {
            List<Entry> entries = byName.computeIfAbsent(n, k -> new ArrayList<>());
            entries.add(new Entry(notifier, ranking, serviceId));
            entries.sort(BEST);
        }
        changed(false);
    }

    /**
     * Unbinds a strategy service; returns once the queues that used it have switched away (or the wait
     * timed out, which is logged).
     */
    public void remove(CompletionNotifier notifier) {
        boolean removed = false;
        synchronized (byName) {
            for (var it = byName.values().iterator(); it.hasNext();) {
                List<Entry> entries = it.next();
                removed |= entries.removeIf(e -> e.notifier == notifier);
                if (entries.isEmpty()) {
                    it.remove();
                }
            }
        }
        if (removed) {
            changed(true);
        }
    }

    /** The strategy to use for {@code name}: the built-in one, the best bound service, or {@code null}. */
    public CompletionNotifier resolve(String name) {
        if (CompletionNotifier.IMMEDIATE.equals(name)) {
            return ImmediateNotifier.INSTANCE;
        }
        synchronized (byName) {
            List<Entry> entries = byName.get(name);
            return entries == null || entries.isEmpty() ? null : entries.get(0).notifier;
        }
    }

    /** Names bound now, the built-in one included, sorted. */
    public List<String> names() {
        TreeSet<String> names = new TreeSet<>();
        names.add(CompletionNotifier.IMMEDIATE);
        synchronized (byName) {
            names.addAll(byName.keySet());
        }
        return List.copyOf(names);
    }

    public void addListener(Listener listener) {
        listeners.add(listener);
    }

    public void removeListener(Listener listener) {
        listeners.remove(listener);
    }

    private void changed(boolean wait) {
        List<CountDownLatch> latches = new ArrayList<>();
        for (Listener l : listeners) {
            latches.addAll(l.strategiesChanged());
        }
        if (!wait) {
            return;
        }
        long deadline = System.nanoTime() + SWITCH_WAIT_NANOS;
        try {
            for (CountDownLatch latch : latches) {
                if (!latch.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    LOG.log(Level.WARNING, "a queue did not leave a removed completion notifier within "
                            + TimeUnit.NANOSECONDS.toMillis(SWITCH_WAIT_NANOS) + " ms");
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
