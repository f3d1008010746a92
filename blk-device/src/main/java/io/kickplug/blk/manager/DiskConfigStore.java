package io.kickplug.blk.manager;

import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.RbdImage;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The disks' ConfigAdmin factory configurations ({@value DiskConfig#FACTORY_PID}), one per disk, keyed by the
 * {@code name} property: what lets a disk outlive the bundles that serve it. ConfigAdmin keeps them in the
 * framework's storage, so they survive the update of any Kickplug bundle, and a runtime started with
 * {@code --cache DIR} or {@code --state DIR} finds them again. Besides what the disk was attached with they hold
 * the settings a user changed while it ran ({@link #record}, {@link DiskSettings}). Configurations are created with
 * the location {@code "?"} so that every version of the block-device bundle may use them.
 */
final class DiskConfigStore {

    private DiskConfigStore() {
    }

    /** The configuration properties {@link DiskConfig#toSpec} turns back into {@code spec}. */
    static Map<String, Object> toProperties(DiskSpec spec) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("name", spec.name());
        p.put("backend", spec.backend().kind());
        if (spec.backend().path() != null && RbdImage.KIND.equals(spec.backend().kind())) {
            p.putAll(DiskConfig.rbdProperties(spec.backend().path())); // the image, as the rbd properties
        } else if (spec.backend().path() != null) {
            // A network backend's path is its URI (nbd).
            p.put(DiskConfig.usesUri(spec.backend().kind()) ? "uri" : "file", spec.backend().path());
        }
        if (spec.backend().sizeBytes() != 0 || !DiskConfig.sizedByBackend(spec.backend().kind())) {
            p.put("size", Long.toString(spec.backend().sizeBytes()));
        }
        p.put("readonly", spec.backend().readOnly());
        p.put("direct", spec.backend().direct());
        if (spec.backend().readZeroes()) {
            p.put("read.zeroes", true);
        }
        if (spec.backend().latencyNs() != 0) {
            p.put("latency.ns", spec.backend().latencyNs());
        }
        p.put("queues", spec.numQueues());
        p.put("queue.size", spec.queueSize());
        p.put("iothreads", spec.ioThreads());
        p.put("mapping", spec.mapping().stream()
                .map(t -> t.stream().map(String::valueOf).collect(Collectors.joining(",")))
                .collect(Collectors.joining(";")));
        p.put("transport", spec.transport().label());
        p.put("ring", spec.ring().id());
        p.put("avail.event", spec.availEvent().id());
        if (spec.serial() != null) {
            p.put("serial", spec.serial());
        }
        p.put("tracked.lock", spec.trackedLock().label());
        p.put("workers", spec.workers());
        return p;
    }

    /** Creates the disk's configuration unless one with its name exists. */
    static void save(ConfigurationAdmin admin, DiskSpec spec) throws IOException {
        if (find(admin, spec.name()) != null) {
            return;
        }
        Configuration c = admin.getFactoryConfiguration(DiskConfig.FACTORY_PID, spec.name(), "?");
        c.update(new Hashtable<>(toProperties(spec)));
    }

    /**
     * Writes a running disk's settings into its configuration ({@link DiskSettings#recordedIn}); nothing when they
     * are there already, or when the disk has no configuration (a benchmark's disk).
     *
     * @return whether the configuration changed
     */
    static boolean record(ConfigurationAdmin admin, String name, DiskSettings live) throws IOException {
        Configuration c = find(admin, name);
        Dictionary<String, Object> props = c == null ? null : c.getProperties();
        if (props == null) {
            return false;
        }
        Map<String, Object> now = withoutIdentity(props);
        Map<String, Object> next = live.recordedIn(now);
        if (next.equals(now)) {
            return false;
        }
        return c.updateIfDifferent(new Hashtable<>(next));
    }

    /**
     * Replaces the properties of the disk's configuration that start with {@code prefix} by {@code settings} (each
     * key prefixed): another bundle's settings of the disk ({@link DiskManagerComponent#keepSettings}).
     *
     * @return false when the disk has no configuration
     */
    static boolean keep(ConfigurationAdmin admin, String name, String prefix, Map<String, String> settings)
            throws IOException {
        Configuration c = find(admin, name);
        Dictionary<String, Object> props = c == null ? null : c.getProperties();
        if (props == null) {
            return false;
        }
        Map<String, Object> next = withoutIdentity(props);
        next.keySet().removeIf(k -> k.startsWith(prefix));
        settings.forEach((k, v) -> next.put(prefix + k, v));
        c.updateIfDifferent(new Hashtable<>(next));
        return true;
    }

    /** The properties of the disk's configuration as they are now, or {@code null} when it has none. */
    static Map<String, Object> properties(ConfigurationAdmin admin, String name) throws IOException {
        Configuration c = find(admin, name);
        Dictionary<String, Object> props = c == null ? null : c.getProperties();
        return props == null ? null : withoutIdentity(props);
    }

    /** The properties without the ones ConfigAdmin sets ({@code service.pid}, {@code service.factoryPid}). */
    private static Map<String, Object> withoutIdentity(Dictionary<String, Object> props) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (java.util.Enumeration<String> keys = props.keys(); keys.hasMoreElements();) {
            String k = keys.nextElement();
            if (!k.equals("service.pid") && !k.equals("service.factoryPid") && !k.equals("service.bundleLocation")) {
                out.put(k, props.get(k));
            }
        }
        return out;
    }

    /** Deletes the disk's configurations; false when it had none. */
    static boolean delete(ConfigurationAdmin admin, String name) throws IOException {
        boolean any = false;
        for (Configuration c : all(admin)) {
            if (name.equals(nameOf(c))) {
                c.delete();
                any = true;
            }
        }
        return any;
    }

    /** Names of the configured disks, in no particular order. */
    static List<String> names(ConfigurationAdmin admin) throws IOException {
        List<String> names = new ArrayList<>();
        for (Configuration c : all(admin)) {
            String n = nameOf(c);
            if (n != null && !names.contains(n)) {
                names.add(n);
            }
        }
        return names;
    }

    private static Configuration find(ConfigurationAdmin admin, String name) throws IOException {
        for (Configuration c : all(admin)) {
            if (name.equals(nameOf(c))) {
                return c;
            }
        }
        return null;
    }

    private static String nameOf(Configuration c) {
        Dictionary<String, Object> props = c.getProperties();
        Object n = props == null ? null : props.get("name");
        return n == null ? null : n.toString().trim();
    }

    private static List<Configuration> all(ConfigurationAdmin admin) throws IOException {
        try {
            Configuration[] found = admin.listConfigurations("(service.factoryPid=" + DiskConfig.FACTORY_PID + ")");
            return found == null ? List.of() : List.of(found);
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException("constant filter is invalid", e);
        }
    }
}
