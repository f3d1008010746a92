package io.kickplug.throttle;

import io.kickplug.api.blk.DiskManager;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Dictionary;
import java.util.Enumeration;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * Throttle settings in the disk's own configuration (the {@code io.kickplug.disk} factory configuration whose
 * {@code name} is the disk, which {@code kp:attach} writes): properties {@code throttle.group} and
 * {@code throttle.<limit>}. The disk manager writes them ({@link DiskManager#keepSettings}), one write at a time
 * with the settings it keeps there itself ({@code notify.strategy}, {@code tracked.lock}, ...), and applies none
 * of them (this bundle does, at a disk's first wrap). Without a disk manager they are written through ConfigAdmin
 * directly. Without ConfigAdmin, or for a disk without configuration, nothing is kept.
 */
final class DiskConfigThrottleStore implements ThrottleStore {

    private static final Logger LOG = System.getLogger(DiskConfigThrottleStore.class.getName());
    /** The disk configurations' factory PID (the blk-device bundle's {@code DiskConfig.FACTORY_PID}). */
    static final String DISK_FACTORY_PID = "io.kickplug.disk";
    static final String PREFIX = "throttle.";

    private final Supplier<ConfigurationAdmin> admin;
    private final Supplier<DiskManager> disks;

    DiskConfigThrottleStore(Supplier<ConfigurationAdmin> admin, Supplier<DiskManager> disks) {
        this.admin = admin;
        this.disks = disks;
    }

    private Configuration find(String disk) throws IOException {
        ConfigurationAdmin a = admin.get();
        if (a == null || !disk.matches("[A-Za-z0-9._-]+")) {
            return null;
        }
        try {
            Configuration[] found = a.listConfigurations("(&(service.factoryPid=" + DISK_FACTORY_PID + ")(name="
                    + disk + "))");
            return found == null || found.length == 0 ? null : found[0];
        } catch (InvalidSyntaxException e) {
            throw new IOException(e);
        }
    }

    @Override
    public Map<String, String> load(String disk) {
        Map<String, String> out = new LinkedHashMap<>();
        try {
            Configuration c = find(disk);
            Dictionary<String, Object> props = c == null ? null : c.getProperties();
            if (props != null) {
                for (Enumeration<String> keys = props.keys(); keys.hasMoreElements();) {
                    String k = keys.nextElement();
                    if (k.startsWith(PREFIX)) {
                        out.put(k.substring(PREFIX.length()), String.valueOf(props.get(k)));
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "disk " + disk + ": cannot read its throttle settings: " + e);
        }
        return out;
    }

    @Override
    public boolean save(String disk, Map<String, String> settings) {
        DiskManager manager = disks.get();
        if (manager != null) {
            try {
                if (manager.keepSettings(disk, PREFIX, settings)) {
                    return true;
                }
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "disk " + disk + ": the disk manager cannot keep its throttle settings: " + e);
            }
        }
        try {
            Configuration c = find(disk);
            Dictionary<String, Object> props = c == null ? null : c.getProperties();
            if (props == null) {
                return false;
            }
            Hashtable<String, Object> next = new Hashtable<>();
            for (Enumeration<String> keys = props.keys(); keys.hasMoreElements();) {
                String k = keys.nextElement();
                if (!k.startsWith(PREFIX) && !k.equals("service.pid") && !k.equals("service.factoryPid")) {
                    next.put(k, props.get(k));
                }
            }
            settings.forEach((k, v) -> next.put(PREFIX + k, v));
            c.updateIfDifferent(next);
            return true;
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "disk " + disk + ": cannot save its throttle settings: " + e);
            return false;
        }
    }
}
