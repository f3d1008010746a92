package io.kickplug.examples.coalesce;

import io.kickplug.api.blk.DiskManager;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Dictionary;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * Each disk's coalescing settings: in memory for the strategy (read at every batch end, so a change applies at
 * once), kept in the disk's own configuration ({@code io.kickplug.disk} factory configuration named by the disk)
 * through {@link DiskManager#keepSettings}, and read back from there the first time a disk is asked for, so they
 * survive an update of this bundle and a restart.
 */
final class DiskSettingsStore {

    private static final Logger LOG = System.getLogger(DiskSettingsStore.class.getName());
    static final String PREFIX = "coalesce.";
    private static final String DISK_FACTORY_PID = "io.kickplug.disk";
    private static final CoalesceSettings UNSET = CoalesceSettings.DEFAULTS.with(Map.of());

    private final Map<String, CoalesceSettings> byDisk = new ConcurrentHashMap<>();
    private Supplier<DiskManager> disks = () -> null;
    private Supplier<ConfigurationAdmin> admin = () -> null;

    void bind(Supplier<DiskManager> disks, Supplier<ConfigurationAdmin> admin) {
        this.disks = disks;
        this.admin = admin;
    }

    /** The disk's settings (the defaults unless set). */
    CoalesceSettings settings(String disk) {
        CoalesceSettings s = byDisk.get(disk);
        if (s == null) {
            s = byDisk.computeIfAbsent(disk, this::load);
        }
        return s == UNSET ? CoalesceSettings.DEFAULTS : s;
    }

    /** The disks with settings of their own. */
    Map<String, CoalesceSettings> all() {
        Map<String, CoalesceSettings> out = new TreeMap<>();
        byDisk.forEach((k, v) -> {
            if (v != UNSET) {
                out.put(k, v);
            }
        });
        return out;
    }

    synchronized CoalesceSettings change(String disk, Map<String, String> changes) {
        CoalesceSettings next = settings(disk).with(changes);
        byDisk.put(disk, next);
        DiskManager manager = disks.get();
        boolean kept = false;
        try {
            kept = manager != null && manager.keepSettings(disk, PREFIX, next.asMap());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "disk " + disk + ": cannot keep its coalescing settings: " + e);
        }
        if (!kept) {
            LOG.log(Level.INFO, "disk " + disk + ": coalescing settings kept in memory only (no disk configuration)");
        }
        return next;
    }

    private CoalesceSettings load(String disk) {
        ConfigurationAdmin a = admin.get();
        if (a == null || !disk.matches("[A-Za-z0-9._-]+")) {
            return UNSET;
        }
        try {
            Configuration[] found = a.listConfigurations("(&(service.factoryPid=" + DISK_FACTORY_PID + ")(name="
                    + disk + "))");
            Dictionary<String, Object> props = found == null || found.length == 0 ? null : found[0].getProperties();
            if (props == null) {
                return UNSET;
            }
            Map<String, String> kept = new LinkedHashMap<>();
            for (Enumeration<String> keys = props.keys(); keys.hasMoreElements();) {
                String k = keys.nextElement();
                if (k.startsWith(PREFIX)) {
                    kept.put(k.substring(PREFIX.length()), String.valueOf(props.get(k)));
                }
            }
            return kept.isEmpty() ? UNSET : CoalesceSettings.DEFAULTS.with(kept);
        } catch (Exception e) {
            LOG.log(Level.WARNING, "disk " + disk + ": cannot read its coalescing settings: " + e);
            return UNSET;
        }
    }
}
