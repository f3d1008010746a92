package io.kickplug.blk.manager;

import java.util.ArrayList;
import java.util.Dictionary;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.framework.Filter;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * ConfigurationAdmin in memory, as Felix's behaves for what the disk manager uses: factory configurations by name,
 * properties returned as copies with {@code service.pid} and {@code service.factoryPid}, {@code updateIfDifferent},
 * filters. Every stored change is kept in {@link #events} (the properties SCR would hand the component), in order.
 */
final class MemoryConfigAdmin implements ConfigurationAdmin {

    /** The properties of each update, in order, as a configuration component would get them. */
    final List<Map<String, Object>> events = new ArrayList<>();
    /**
     * Runs at the start of each {@code updateIfDifferent}, on the updating thread, before anything is locked: a
     * test holds a writer there, between its read of the properties and its write.
     */
    volatile Runnable beforeUpdate = () -> { };
    private final Map<String, Config> configs = new LinkedHashMap<>();

    /** The properties of the one configuration whose {@code name} is {@code disk}, or {@code null}. */
    synchronized Map<String, Object> of(String disk) {
        for (Config c : configs.values()) {
            if (c.props != null && disk.equals(c.props.get("name"))) {
                return toMap(c.getProperties());
            }
        }
        return null;
    }

    static Map<String, Object> toMap(Dictionary<String, ?> d) {
        Map<String, Object> m = new HashMap<>();
        for (Enumeration<String> keys = d.keys(); keys.hasMoreElements();) {
            String k = keys.nextElement();
            m.put(k, d.get(k));
        }
        return m;
    }

    @Override
    public synchronized Configuration getFactoryConfiguration(String factoryPid, String name, String location) {
        return configs.computeIfAbsent(factoryPid + "~" + name, pid -> new Config(pid, factoryPid));
    }

    @Override
    public Configuration getFactoryConfiguration(String factoryPid, String name) {
        return getFactoryConfiguration(factoryPid, name, null);
    }

    @Override
    public synchronized Configuration[] listConfigurations(String filter) throws InvalidSyntaxException {
        Filter f = filter == null ? null : FrameworkUtil.createFilter(filter);
        List<Configuration> out = new ArrayList<>();
        for (Config c : configs.values()) {
            if (c.props != null && (f == null || f.match(c.getProperties()))) {
                out.add(c);
            }
        }
        return out.isEmpty() ? null : out.toArray(new Configuration[0]);
    }

    @Override
    public Configuration createFactoryConfiguration(String factoryPid) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Configuration createFactoryConfiguration(String factoryPid, String location) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Configuration getConfiguration(String pid, String location) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Configuration getConfiguration(String pid) {
        throw new UnsupportedOperationException();
    }

    private final class Config implements Configuration {
        private final String pid;
        private final String factoryPid;
        private Hashtable<String, Object> props;
        private long changes;

        Config(String pid, String factoryPid) {
            this.pid = pid;
            this.factoryPid = factoryPid;
        }

        @Override
        public String getPid() {
            return pid;
        }

        @Override
        public Dictionary<String, Object> getProperties() {
            synchronized (MemoryConfigAdmin.this) {
                if (props == null) {
                    return null;
                }
                Hashtable<String, Object> copy = new Hashtable<>(props);
                copy.put("service.pid", pid);
                copy.put("service.factoryPid", factoryPid);
                return copy;
            }
        }

        @Override
        public Dictionary<String, Object> getProcessedProperties(ServiceReference<?> reference) {
            return getProperties();
        }

        @Override
        public void update(Dictionary<String, ?> properties) {
            synchronized (MemoryConfigAdmin.this) {
                Hashtable<String, Object> next = new Hashtable<>();
                for (Enumeration<String> keys = properties.keys(); keys.hasMoreElements();) {
                    String k = keys.nextElement();
                    if (!k.equals("service.pid") && !k.equals("service.factoryPid")) {
                        next.put(k, properties.get(k));
                    }
                }
                props = next;
                changes++;
                events.add(toMap(getProperties()));
            }
        }

        @Override
        public boolean updateIfDifferent(Dictionary<String, ?> properties) {
            beforeUpdate.run();
            synchronized (MemoryConfigAdmin.this) {
                Map<String, Object> now = props == null ? null : toMap(props);
                Map<String, Object> next = toMap(properties);
                next.remove("service.pid");
                next.remove("service.factoryPid");
                if (next.equals(now)) {
                    return false;
                }
                update(properties);
                return true;
            }
        }

        @Override
        public void delete() {
            synchronized (MemoryConfigAdmin.this) {
                configs.remove(pid);
                props = null;
            }
        }

        @Override
        public String getFactoryPid() {
            return factoryPid;
        }

        @Override
        public void update() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void setBundleLocation(String location) {
        }

        @Override
        public String getBundleLocation() {
            return "?";
        }

        @Override
        public long getChangeCount() {
            return changes;
        }

        @Override
        public void addAttributes(ConfigurationAttribute... attrs) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Set<ConfigurationAttribute> getAttributes() {
            return Set.of();
        }

        @Override
        public void removeAttributes(ConfigurationAttribute... attrs) {
            throw new UnsupportedOperationException();
        }
    }
}
