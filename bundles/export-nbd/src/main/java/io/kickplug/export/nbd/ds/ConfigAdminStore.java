package io.kickplug.export.nbd.ds;

import io.kickplug.export.nbd.Listener;
import io.kickplug.export.nbd.NbdService;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The NBD server and exports as ConfigAdmin configurations, so they outlive every bundle but {@code api}: the server
 * as {@value #SERVER_PID} ({@code socket} | {@code host}+{@code port} | {@code fd}, {@code max.connections}), each
 * export as a factory configuration of {@value #EXPORT_PID} ({@code name}, {@code disk}, {@code writable}). Created
 * with location {@code "?"} for every version of the bundle. A failure is logged, never thrown: the server runs
 * without being saved.
 */
final class ConfigAdminStore implements NbdService.Store {

    static final String SERVER_PID = "io.kickplug.export.nbd.server";
    static final String EXPORT_PID = "io.kickplug.export.nbd.export";
    private static final Logger LOG = System.getLogger(ConfigAdminStore.class.getName());

    private final ConfigurationAdmin admin;

    ConfigAdminStore(ConfigurationAdmin admin) {
        this.admin = admin;
    }

    @Override
    public void saveServer(Listener l, int maxConnections) {
        try {
            Configuration c = admin.getConfiguration(SERVER_PID, "?");
            Hashtable<String, Object> p = new Hashtable<>();
            if (l.socket() != null) {
                p.put("socket", l.socket());
            }
            if (l.host() != null) {
                p.put("host", l.host());
                p.put("port", l.port());
            }
            if (l.fd() >= 0) {
                p.put("fd", l.fd());
            }
            p.put("max.connections", maxConnections);
            c.update(p);
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "the NBD server's configuration was not saved: " + e);
        }
    }

    @Override
    public void deleteServer() {
        try {
            Configuration[] found = admin.listConfigurations("(service.pid=" + SERVER_PID + ")");
            if (found != null) {
                for (Configuration c : found) {
                    c.delete();
                }
            }
        } catch (IOException | InvalidSyntaxException | RuntimeException e) {
            LOG.log(Level.WARNING, "the NBD server's configuration was not deleted: " + e);
        }
    }

    @Override
    public NbdService.SavedServer server() {
        try {
            Configuration[] found = admin.listConfigurations("(service.pid=" + SERVER_PID + ")");
            if (found == null || found.length == 0 || found[0].getProperties() == null) {
                return null;
            }
            Dictionary<String, Object> p = found[0].getProperties();
            int max = intOf(p.get("max.connections"), NbdCommands.DEFAULT_MAX_CONNECTIONS);
            Listener l;
            if (p.get("socket") != null) {
                l = Listener.unix(String.valueOf(p.get("socket")));
            } else if (p.get("host") != null) {
                l = Listener.tcp(String.valueOf(p.get("host")), intOf(p.get("port"), 10809));
            } else if (p.get("fd") != null) {
                l = Listener.inherited(intOf(p.get("fd"), -1));
            } else {
                return null;
            }
            return new NbdService.SavedServer(l, max);
        } catch (IOException | InvalidSyntaxException | RuntimeException e) {
            LOG.log(Level.ERROR, "cannot read the saved NBD server: " + e);
            return null;
        }
    }

    @Override
    public void saveExport(NbdService.SavedExport export) {
        deleteExport(export.name());
        try {
            Configuration c = admin.getFactoryConfiguration(EXPORT_PID, export.name(), "?");
            Hashtable<String, Object> p = new Hashtable<>();
            p.put("name", export.name());
            p.put("disk", export.disk());
            p.put("writable", export.writable());
            c.update(p);
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "NBD export " + export.name() + " was not saved: " + e);
        }
    }

    @Override
    public void deleteExport(String name) {
        for (Configuration c : exportConfigs()) {
            Dictionary<String, Object> p = c.getProperties();
            if (p != null && name.equals(String.valueOf(p.get("name")))) {
                try {
                    c.delete();
                } catch (IOException | RuntimeException e) {
                    LOG.log(Level.WARNING, "NBD export " + name + ": configuration not deleted: " + e);
                }
            }
        }
    }

    @Override
    public List<NbdService.SavedExport> exports() {
        List<NbdService.SavedExport> out = new ArrayList<>();
        for (Configuration c : exportConfigs()) {
            Dictionary<String, Object> p = c.getProperties();
            if (p == null || p.get("name") == null || p.get("disk") == null) {
                continue;
            }
            out.add(new NbdService.SavedExport(String.valueOf(p.get("name")), String.valueOf(p.get("disk")),
                    Boolean.parseBoolean(String.valueOf(p.get("writable")))));
        }
        return out;
    }

    private List<Configuration> exportConfigs() {
        try {
            Configuration[] found = admin.listConfigurations("(service.factoryPid=" + EXPORT_PID + ")");
            return found == null ? List.of() : List.of(found);
        } catch (IOException | InvalidSyntaxException e) {
            LOG.log(Level.ERROR, "cannot list the saved NBD exports: " + e);
            return List.of();
        }
    }

    private static int intOf(Object value, int otherwise) {
        try {
            return value == null ? otherwise : Integer.parseInt(String.valueOf(value));
        } catch (NumberFormatException e) {
            return otherwise;
        }
    }
}
