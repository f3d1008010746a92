package io.kickplug.docs;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The two generated pages as Markdown: docs/reference/commands.md from {@link CommandDocs} and
 * docs/reference/configuration.md from {@link MetatypeDocs}. Deterministic: sorted, no dates; prose wrapped at
 * {@value #WIDTH} columns (table rows are one line each, as Markdown needs).
 */
final class ReferencePages {

    static final int WIDTH = 110;
    /** How to regenerate both pages, named in the pages and in the check's failure. */
    static final String REGENERATE = "scripts/reference-docs.sh";

    /** The groups of commands, in page order, and their commands; a command in none goes to {@link #OTHER}. */
    static final Map<String, List<String>> GROUPS = groups();
    static final String OTHER = "Other commands";

    private static Map<String, List<String>> groups() {
        Map<String, List<String>> g = new LinkedHashMap<>();
        g.put("Disks", List.of("attach", "detach", "disks", "resize", "ring", "tracked-lock", "throttle", "swap"));
        g.put("Guest and workloads", List.of("guest", "io", "fio", "lockstat"));
        g.put("Notification and polling", List.of("notify", "strategies", "stats", "poll"));
        g.put("vhost-user", List.of("vhost", "vhost-list", "vhost-stop"));
        g.put("NBD export", List.of("nbd-server", "nbd-export", "nbd-export-stop", "nbd-list"));
        g.put("Plugins", List.of("install", "uninstall", "plugins", "backends", "filters", "compare"));
        g.put("QMP", List.of("qmp", "qmp-monitor"));
        g.put("Benchmarks", List.of("bench"));
        return g;
    }

    private ReferencePages() {
    }

    /** The group of {@code function}: one of {@link #GROUPS}' keys, or {@link #OTHER}. */
    static String group(String function) {
        for (Map.Entry<String, List<String>> e : GROUPS.entrySet()) {
            if (e.getValue().contains(function)) {
                return e.getKey();
            }
        }
        return OTHER;
    }

    static String commands(List<CommandDocs.Command> commands) {
        Map<String, List<CommandDocs.Command>> byGroup = new LinkedHashMap<>();
        GROUPS.keySet().forEach(k -> byGroup.put(k, new ArrayList<>()));
        byGroup.put(OTHER, new ArrayList<>());
        for (CommandDocs.Command c : commands) {
            byGroup.get(group(c.function())).add(c);
        }
        StringBuilder out = new StringBuilder();
        out.append("# Command reference\n\n");
        generatedBy(out);
        paragraph(out, "Every Kickplug command is a Gogo command of scope `kp`, typed at the Gogo shell or given to "
                + "`kickplug.jar -c`. This page is generated from the commands' own declarations: Gogo's `@Descriptor` "
                + "and `@Parameter` annotations, which `help kp:attach` shows in the shell too, and the option tables "
                + "of the commands that parse their own options. An option is `--name VALUE`, a flag just `--name`; "
                + "`[options]` in a synopsis stands for the options in the table under it. The shapes of `--json` "
                + "output are in [json.md](json.md).");
        for (Map.Entry<String, List<CommandDocs.Command>> group : byGroup.entrySet()) {
            List<CommandDocs.Command> list = group.getValue();
            if (list.isEmpty()) {
                continue;
            }
            list.sort(Comparator.comparing(CommandDocs.Command::function));
            out.append("## ").append(group.getKey()).append("\n\n");
            out.append("| command | what it does |\n|---|---|\n");
            for (CommandDocs.Command c : list) {
                out.append("| [").append(c.name()).append("](#").append(anchor(c.name())).append(") | ")
                        .append(cell(c.summary())).append(" |\n");
            }
            out.append('\n');
            for (CommandDocs.Command c : list) {
                command(out, c);
            }
        }
        return finish(out);
    }

    private static void command(StringBuilder out, CommandDocs.Command c) {
        out.append("### ").append(c.name()).append("\n\n");
        for (CommandDocs.Form form : c.methods()) {
            form(out, form, true);
        }
        if (c.tables().size() == 1) {
            paragraph(out, "Its options, which " + c.name() + " parses itself:");
        } else if (!c.tables().isEmpty()) {
            paragraph(out, "Its forms and their options, which " + c.name() + " parses itself:");
        }
        for (CommandDocs.Form form : c.tables()) {
            // a table's synopsis that says what the method's does is not repeated
            form(out, form, c.methods().stream().noneMatch(m -> m.synopsis().equals(form.synopsis())));
        }
        paragraph(out, "From bundle `" + c.bundle() + "` (`" + c.implementation() + "`).");
    }

    private static void form(StringBuilder out, CommandDocs.Form form, boolean synopsis) {
        if (synopsis) {
            out.append("```\n").append(form.synopsis()).append("\n```\n\n");
        }
        if (!form.description().isBlank()) {
            paragraph(out, sentence(form.description()));
        }
        if (!form.options().isEmpty()) {
            out.append("| option | takes | default | description |\n|---|---|---|---|\n");
            for (CommandDocs.Option o : form.options()) {
                String names = String.join(", ", o.names().stream().map(ReferencePages::code).toList());
                String takes = o.flag() ? "flag" : o.value().equals("value") ? "value" : code(o.value());
                String dflt = o.flag() ? "off" : o.defaultValue();
                out.append("| ").append(names).append(" | ").append(takes).append(" | ").append(cell(dflt))
                        .append(" | ").append(cell(o.description())).append(" |\n");
            }
            out.append('\n');
        }
        if (!form.operands().isEmpty()) {
            out.append("| operand | description |\n|---|---|\n");
            for (CommandDocs.Operand o : form.operands()) {
                out.append("| ").append(code(o.synopsis())).append(" | ").append(cell(o.description()))
                        .append(" |\n");
            }
            out.append('\n');
        }
    }

    static String configuration(List<MetatypeDocs.Pid> pids) {
        StringBuilder out = new StringBuilder();
        out.append("# Configuration reference\n\n");
        generatedBy(out);
        paragraph(out, "What users set up (disks, exports) is kept as ConfigAdmin configurations, so it outlives the "
                + "bundles that serve it: `kp:attach` and `kp:vhost` write them, and they can be declared through "
                + "ConfigAdmin directly. This page is generated from the metatype the bundles carry "
                + "(`OSGI-INF/metatype/*.xml`, which bnd writes from the code's `@ObjectClassDefinition`). A factory "
                + "PID takes one configuration per instance. \"required\" is the metatype's: a value must be present "
                + "(an attribute with a default has one).");
        List<MetatypeDocs.Pid> sorted = new ArrayList<>(pids);
        sorted.sort(Comparator.comparing(MetatypeDocs.Pid::pid));
        for (MetatypeDocs.Pid p : sorted) {
            out.append("## ").append(p.pid()).append("\n\n");
            paragraph(out, sentence(p.name() + ": " + p.description()) + " " + (p.factory()
                    ? "A factory PID (one configuration per instance)" : "A PID (one configuration)")
                    + ", from bundle `" + p.bundle() + "`.");
            out.append("| attribute | type | default | values | required | description |\n")
                    .append("|---|---|---|---|---|---|\n");
            for (MetatypeDocs.Attribute a : p.attributes()) {
                out.append("| ").append(code(a.id())).append(" | ").append(a.type()).append(" | ")
                        .append(cell(a.defaultValue() == null ? "" : a.defaultValue().isEmpty() ? "(empty)"
                                : a.defaultValue()))
                        .append(" | ").append(cell(values(a))).append(" | ").append(a.required() ? "yes" : "no")
                        .append(" | ").append(cell(a.description())).append(" |\n");
            }
            out.append('\n');
        }
        return finish(out);
    }

    /** The allowed values: the options, the range, how many. */
    static String values(MetatypeDocs.Attribute a) {
        List<String> parts = new ArrayList<>();
        if (!a.choices().isEmpty()) {
            List<String> choices = new ArrayList<>();
            for (MetatypeDocs.Choice c : a.choices()) {
                String label = c.label();
                if (label.isEmpty() || label.equals(c.value())) {
                    choices.add(code(c.value()));
                } else if (label.startsWith(c.value() + " (")) {
                    choices.add(code(c.value()) + label.substring(c.value().length())); // "pop (as QEMU ...)"
                } else {
                    choices.add(code(c.value()) + " (" + label + ")");
                }
            }
            parts.add(String.join(", ", choices));
        }
        if (a.min() != null && a.max() != null) {
            parts.add(a.min() + " to " + a.max());
        } else if (a.min() != null) {
            parts.add("at least " + a.min());
        } else if (a.max() != null) {
            parts.add("at most " + a.max());
        }
        if (a.cardinality() != 0) {
            int n = Math.abs(a.cardinality());
            parts.add(n == Integer.MAX_VALUE ? "any number of values" : "up to " + n + " values");
        }
        return String.join("; ", parts);
    }

    private static void generatedBy(StringBuilder out) {
        out.append("<!--\n  Generated from the code by distribution/src/test/java/io/kickplug/docs/ReferenceDocs.java: do not "
                + "edit.\n  Regenerate with ").append(REGENERATE).append("; ReferenceDocsIT (mvn verify) fails when this "
                + "page is out of date.\n-->\n\n");
    }

    /** GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces as '-'. */
    static String anchor(String heading) {
        return heading.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-');
    }

    /** First letter up, a period at the end. */
    static String sentence(String text) {
        String t = text.strip();
        if (t.isEmpty()) {
            return t;
        }
        t = Character.toUpperCase(t.charAt(0)) + t.substring(1);
        return t.endsWith(".") ? t : t + ".";
    }

    static String code(String text) {
        return "`" + text.replace("|", "\\|") + "`";
    }

    /** Text for a table cell: one line, '|' escaped. */
    static String cell(String text) {
        return text.replace("\r", "").replace("\n", " ").replace("|", "\\|");
    }

    /** A paragraph wrapped at {@link #WIDTH} columns, then a blank line. */
    static void paragraph(StringBuilder out, String text) {
        int lineStart = out.length();
        for (String word : text.strip().split("\\s+")) {
            if (out.length() > lineStart && out.length() - lineStart + 1 + word.length() > WIDTH) {
                out.append('\n');
                lineStart = out.length();
            } else if (out.length() > lineStart) {
                out.append(' ');
            }
            out.append(word);
        }
        out.append("\n\n");
    }

    private static String finish(StringBuilder out) {
        String s = out.toString();
        while (s.endsWith("\n\n")) {
            s = s.substring(0, s.length() - 1);
        }
        return s;
    }
}
