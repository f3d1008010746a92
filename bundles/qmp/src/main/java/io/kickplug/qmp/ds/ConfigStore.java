package io.kickplug.qmp.ds;

import io.kickplug.qmp.QmpServices;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The QMP state in one ConfigAdmin configuration ({@value #PID}: {@code state}, the engine's nodes, objects and
 * export ids as JSON; {@code monitors}, the monitor sockets), with location {@code "?"} so that every version of
 * this bundle reads it: what a QMP client made outlives updates of this bundle and the runtime's restarts.
 */
final class ConfigStore implements QmpServices.Store {

    static final String PID = "io.kickplug.qmp";
    private static final System.Logger LOG = System.getLogger(ConfigStore.class.getName());

    private final ConfigurationAdmin admin;

    ConfigStore(ConfigurationAdmin admin) {
        this.admin = admin;
    }

    private Dictionary<String, Object> properties() throws IOException {
        Dictionary<String, Object> p = admin.getConfiguration(PID, "?").getProperties();
        return p == null ? new Hashtable<>() : p;
    }

    private synchronized void put(String key, Object value) {
        try {
            Configuration c = admin.getConfiguration(PID, "?");
            Dictionary<String, Object> p = c.getProperties();
            Hashtable<String, Object> next = new Hashtable<>();
            if (p != null) {
                for (var keys = p.keys(); keys.hasMoreElements(); ) {
                    String k = keys.nextElement();
                    next.put(k, p.get(k));
                }
            }
            next.put(key, value);
            c.update(next);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "QMP " + key + " not saved: " + e);
        }
    }

    @Override
    public String load() {
        try {
            Object s = properties().get("state");
            return s == null ? null : s.toString();
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "cannot read the saved QMP state: " + e);
            return null;
        }
    }

    @Override
    public void save(String state) {
        put("state", state);
    }

    List<String> monitors() {
        try {
            Object m = properties().get("monitors");
            List<String> out = new ArrayList<>();
            if (m instanceof String[] a) {
                out.addAll(List.of(a));
            }
            return out;
        } catch (IOException | RuntimeException e) {
            return new ArrayList<>();
        }
    }

    void saveMonitors(List<String> paths) {
        put("monitors", paths.toArray(String[]::new));
    }
}
