package io.kickplug.api.command;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The options of a command (or of one form of it) that parses its own arguments instead of declaring them as Gogo
 * {@code @Parameter}s: the one place that says which options exist. The command's parser refuses a name that is not
 * here ({@link #has}, {@link #unknown}), and the command reference is generated from it: a command component
 * publishes its tables in a {@code public static final} field named {@code OPTIONS}, of type {@code OptionTable} or
 * {@code List<OptionTable>}, which the generator reads.
 *
 * @param usage what follows {@code kp:FUNCTION} in this form's synopsis, e.g. {@code "kick [options]"}
 * @param description what this form does, one sentence or two (no trailing period needed)
 * @param options the options, in the order the parser's messages list them
 */
public record OptionTable(String usage, String description, List<Option> options) {

    /**
     * One option.
     *
     * @param names its name and then its aliases, each with its leading {@code --}
     * @param value what the value looks like ({@code N}, {@code FILE}, {@code auto|real|virtual}), or {@code null}
     *     for a flag, which takes none
     * @param defaultValue what applies when the option is not given, as the reference shows it ({@code ""}: nothing
     *     to show)
     * @param description what it does
     */
    public record Option(List<String> names, String value, String defaultValue, String description) {

        public Option {
            names = List.copyOf(names);
            if (names.isEmpty()) {
                throw new IllegalArgumentException("an option needs a name");
            }
            for (String n : names) {
                if (!n.startsWith("--") || n.length() < 3) {
                    throw new IllegalArgumentException("option names start with --: '" + n + "'");
                }
            }
            Objects.requireNonNull(defaultValue, "defaultValue");
            Objects.requireNonNull(description, "description");
        }

        /** An option that takes a value. */
        public static Option valued(String name, String value, String defaultValue, String description) {
            return new Option(List.of(name), Objects.requireNonNull(value, "value"), defaultValue, description);
        }

        /** A flag: no value; off unless given. */
        public static Option flag(String name, String description) {
            return new Option(List.of(name), null, "", description);
        }

        /** This option with {@code alias} as another name. */
        public Option alias(String alias) {
            List<String> all = new ArrayList<>(names);
            all.add(alias);
            return new Option(all, value, defaultValue, description);
        }

        /** The first name. */
        public String name() {
            return names.get(0);
        }

        public boolean flag() {
            return value == null;
        }
    }

    public OptionTable {
        Objects.requireNonNull(usage, "usage");
        Objects.requireNonNull(description, "description");
        options = List.copyOf(options);
        Set<String> seen = new LinkedHashSet<>();
        for (Option o : options) {
            for (String n : o.names()) {
                if (!seen.add(n)) {
                    throw new IllegalArgumentException("option " + n + " is in the table twice");
                }
            }
        }
    }

    public OptionTable(String usage, String description, Option... options) {
        this(usage, description, List.of(options));
    }

    /** The option with {@code name} (its name or an alias), or {@code null}. */
    public Option find(String name) {
        for (Option o : options) {
            if (o.names().contains(name)) {
                return o;
            }
        }
        return null;
    }

    /** Whether {@code name} is one of the options (a name or an alias). */
    public boolean has(String name) {
        return find(name) != null;
    }

    /** Every name (and alias) of the flags, for a parser that must not take the next argument as their value. */
    public Set<String> flags() {
        Set<String> out = new LinkedHashSet<>();
        for (Option o : options) {
            if (o.flag()) {
                out.addAll(o.names());
            }
        }
        return out;
    }

    /** The options' names for a message: {@code "--runtime, --json or --html"}. */
    public String names() {
        List<String> names = new ArrayList<>();
        for (Option o : options) {
            names.add(o.name());
        }
        return sentence(names);
    }

    /** The options with their values for a message: {@code "--runtime S, --json FILE or --quick"}. */
    public String expected() {
        List<String> forms = new ArrayList<>();
        for (Option o : options) {
            forms.add(o.flag() ? o.name() : o.name() + " " + o.value());
        }
        return sentence(forms);
    }

    /** The error for an option that is not in the table: "unknown option NAME (expected --a, --b or --c)". */
    public IllegalArgumentException unknown(String name) {
        return new IllegalArgumentException("unknown option " + name + " (expected " + names() + ")");
    }

    private static String sentence(List<String> items) {
        if (items.size() <= 1) {
            return String.join("", items);
        }
        return String.join(", ", items.subList(0, items.size() - 1)) + " or " + items.get(items.size() - 1);
    }
}
