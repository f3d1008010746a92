package io.kickplug.shell;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Text and JSON of {@code kp:install}, {@code kp:uninstall} and the provider listings ({@code kp:backends}, ...). */
final class PluginText {

    private PluginText() {
    }

    /** "installed io.example.coalesce 1.0.0 [42] from FILE\n  strategy coalesce\n ..." */
    static String installed(Plugins.Installed in) {
        StringBuilder sb = new StringBuilder(in.updated() ? "updated " : "installed ").append(in.bundle())
                .append(' ').append(in.version()).append(" [").append(in.bundleId()).append("] from ")
                .append(in.source());
        sb.append(in.kept() ? "\n  kept for the next start (--state)" : "\n  for this run only (no --state DIR)");
        if (in.registered().isEmpty()) {
            sb.append("\n  registered no strategy, backend, filter or poll policy");
        }
        for (Provided p : in.registered()) {
            sb.append("\n  ").append(p.kind().label).append(' ').append(p.name());
        }
        return sb.toString();
    }

    static Map<String, Object> installedJson(Plugins.Installed in) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("bundle", in.bundle());
        m.put("version", in.version());
        m.put("id", in.bundleId());
        m.put("source", in.source());
        m.put("updated", in.updated());
        m.put("kept", in.kept());
        m.put("registered", registered(in.registered()));
        return m;
    }

    static String uninstalled(Plugins.Uninstalled out) {
        StringBuilder sb = new StringBuilder("uninstalled ").append(out.bundle()).append(' ').append(out.version())
                .append(" [").append(out.bundleId()).append(']');
        for (Provided p : out.registered()) {
            sb.append("\n  ").append(p.kind().label).append(' ').append(p.name()).append(" gone");
        }
        return sb.toString();
    }

    static Map<String, Object> uninstalledJson(Plugins.Uninstalled out) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("bundle", out.bundle());
        m.put("version", out.version());
        m.put("id", out.bundleId());
        m.put("registered", registered(out.registered()));
        return m;
    }

    private static List<Map<String, Object>> registered(List<Provided> ps) {
        List<Map<String, Object>> list = new ArrayList<>();
        for (Provided p : ps) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("kind", p.kind().name().toLowerCase(Locale.ROOT));
            r.put("name", p.name());
            list.add(r);
        }
        return list;
    }

    /** A provider listing: name, the bundle providing it, and whether that bundle is a plugin. */
    static String providers(PluginKind kind, List<Provided> ps, Map<String, String> extra, String extraHeader) {
        List<String[]> rows = new ArrayList<>();
        rows.add(extra == null ? new String[] {kind.label, "bundle", "plugin"}
                : new String[] {kind.label, "bundle", "plugin", extraHeader});
        for (Provided p : ps) {
            String[] r = extra == null ? new String[3] : new String[4];
            r[0] = p.name();
            r[1] = p.bundleText();
            r[2] = p.plugin() ? "yes" : "no";
            if (extra != null) {
                r[3] = extra.getOrDefault(p.name(), "-");
            }
            rows.add(r);
        }
        if (ps.isEmpty()) {
            return "no " + kind.plural + " registered";
        }
        return table(rows);
    }

    static List<Map<String, Object>> providersJson(List<Provided> ps) {
        List<Map<String, Object>> list = new ArrayList<>();
        for (Provided p : ps) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("name", p.name());
            r.put("bundle", p.bundle());
            r.put("version", p.version());
            r.put("bundle_id", p.bundleId());
            r.put("plugin", p.plugin());
            list.add(r);
        }
        return list;
    }

    static String table(List<String[]> rows) {
        int[] w = new int[rows.get(0).length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                w[i] = Math.max(w[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String[] r : rows) {
            if (sb.length() > 0) {
                sb.append('\n');
            }
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                line.append(i == 0 ? "" : "  ").append(String.format(Locale.ROOT, "%-" + w[i] + "s", r[i]));
            }
            sb.append(line.toString().stripTrailing());
        }
        return sb.toString();
    }
}
