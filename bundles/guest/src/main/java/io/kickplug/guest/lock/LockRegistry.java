package io.kickplug.guest.lock;

import io.kickplug.api.lockstat.LockStatRow;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The lock classes of the simulated guest by name. A class outlives the locks that report into it (a new
 * machine on the same disk adds to its vq classes), until {@link #reset()} zeroes them.
 */
public final class LockRegistry {

    private final ConcurrentMap<String, LockClass> classes = new ConcurrentHashMap<>();

    /** The class named {@code name}, created on first use. */
    public LockClass lockClass(String name) {
        return classes.computeIfAbsent(name, LockClass::new);
    }

    /** Snapshots of every class, sorted by name. */
    public List<LockStatRow> rows() {
        return classes.values().stream().map(LockClass::snapshot).sorted(Comparator.comparing(LockStatRow::name))
                .toList();
    }

    public void reset() {
        classes.values().forEach(LockClass::reset);
    }
}
