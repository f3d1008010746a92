package io.kickplug.shell;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Gogo commands of scope {@code kp} for plugins: {@code kp:install} and {@code kp:uninstall} (a plugin bundle jar
 * into or out of the running runtime), {@code kp:plugins} (the plugin bundles and what each registers), and the
 * provider listings {@code kp:backends} and {@code kp:filters} (every service of the kind, with the bundle that
 * provides it; {@code kp:strategies} lists the strategies so). Thin adapters over {@link Plugins}.
 */
@Component(service = PluginCommands.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=install",
    "osgi.command.function=uninstall",
    "osgi.command.function=plugins",
    "osgi.command.function=backends",
    "osgi.command.function=filters",
})
public final class PluginCommands {

    private Plugins plugins;

    @Reference(name = "diskManager", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile DiskManager disks;

    @Activate
    void activate(BundleContext context) {
        plugins = new Plugins(context);
    }

    @Descriptor("install a plugin bundle jar (a strategy, backend, filter or poll policy) into the running runtime and"
            + " start it; prints its name, version and what it registered. A plugin of the same name is updated. With"
            + " --state DIR it is kept for the next start")
    public String install(
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("PATH | URL of the bundle jar") String source) {
        Plugins.Installed in = plugins.install(source);
        return json ? JsonOut.write(PluginText.installedJson(in)) : PluginText.installed(in);
    }

    @Descriptor("uninstall a plugin that kp:install installed; disks using its strategy fall back to immediate (the"
            + " notification owed is sent), disks behind its filter go on without it")
    public String uninstall(
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("NAME | ID: the plugin's symbolic name or bundle id") String plugin) {
        Plugins.Uninstalled out = plugins.uninstall(plugin);
        return json ? JsonOut.write(PluginText.uninstalledJson(out)) : PluginText.uninstalled(out);
    }

    @Descriptor("list the plugin bundles installed with kp:install and what each registers")
    public String plugins(
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json) {
        List<Map<String, Object>> out = new ArrayList<>();
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"id", "plugin", "version", "state", "registers"});
        for (Bundle b : plugins.plugins()) {
            List<Provided> ps = plugins.registeredBy(b);
            List<String> what = new ArrayList<>();
            ps.forEach(p -> what.add(p.kind().label + " " + p.name()));
            String state = state(b);
            rows.add(new String[] {Long.toString(b.getBundleId()), b.getSymbolicName(), b.getVersion().toString(),
                state, what.isEmpty() ? "-" : String.join(", ", what)});
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", b.getBundleId());
            m.put("bundle", b.getSymbolicName());
            m.put("version", b.getVersion().toString());
            m.put("state", state);
            m.put("registers", PluginText.providersJson(ps));
            out.add(m);
        }
        if (json) {
            return JsonOut.write(Map.of("plugins", out));
        }
        return rows.size() == 1 ? "no plugins installed (kp:install PATH|URL installs one)" : PluginText.table(rows);
    }

    @Descriptor("list the backend kinds (kp:attach's --backend) with the bundle that provides each")
    public String backends(
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json) {
        return listing(PluginKind.BACKEND, json, null, null);
    }

    @Descriptor("list the backend filters with the bundle that provides each; every disk's requests pass through "
            + "every filter bound")
    public String filters(
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json) {
        Map<String, String> disksOf = new TreeMap<>();
        DiskManager dm = disks;
        if (dm != null) {
            List<String> names = dm.list().stream().map(DiskInfo::name).toList();
            for (Provided p : plugins.all(PluginKind.FILTER)) {
                disksOf.put(p.name(), names.isEmpty() ? "-" : String.join(" ", names));
            }
        }
        return listing(PluginKind.FILTER, json, disksOf, "disks");
    }

    private String listing(PluginKind kind, boolean json, Map<String, String> extra, String extraHeader) {
        List<Provided> ps = plugins.all(kind);
        if (json) {
            return JsonOut.write(Map.of(kind.plural.replace(' ', '_'),
                    PluginText.providersJson(ps)));
        }
        return PluginText.providers(kind, ps, extra, extraHeader);
    }

    private static String state(Bundle b) {
        return switch (b.getState()) {
            case Bundle.ACTIVE -> "active";
            case Bundle.RESOLVED -> "resolved";
            case Bundle.INSTALLED -> "installed";
            case Bundle.STARTING -> "starting";
            case Bundle.STOPPING -> "stopping";
            default -> "uninstalled";
        };
    }
}
