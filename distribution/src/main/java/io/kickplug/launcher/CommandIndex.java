package io.kickplug.launcher;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the component descriptions of the distribution's bundles say ({@link CommandComponents.Descriptions}),
 * read once at package time ({@code felix/commands.idx}) instead of at every start: parsing them with the JDK's
 * XML parser cost a daemon about a tenth of its start-up CPU time. An entry counts only for the jar it was made
 * from (same file name, size and modification time); any other jar, or a missing, unreadable or older-format
 * index, is read as before with {@link CommandComponents#of}.
 *
 * <p>Format {@value #VERSION} (the header line names it; an index of another format is not used), tab-separated,
 * every line starting with {@code jar size mtime-millis}: one line with these three fields only per bundle, then
 * {@code C component-name scope function,function... interface,interface...} per command component (its
 * referenced interfaces, or {@code -} for none), {@code P interface,interface...} for the interfaces its
 * components provide and {@code R interface,interface...} for those they reference (each line only when there
 * are some). Format 1 had no references or provided interfaces: read by this launcher, it would let a daemon
 * start the guest bundle after its statements although they use kp:io.
 */
public final class CommandIndex {

    static final String FILE = "commands.idx";
    static final int VERSION = 2;
    private static final String HEADER = "# kickplug command index " + VERSION;
    /** The interface list of a command component that references none. */
    static final String NONE = "-";

    private record Key(long size, long mtime) {
    }

    private final Map<String, Key> keys;
    private final Map<String, CommandComponents.Descriptions> descriptions;

    private CommandIndex(Map<String, Key> keys, Map<String, CommandComponents.Descriptions> descriptions) {
        this.keys = keys;
        this.descriptions = descriptions;
    }

    private static CommandIndex empty() {
        return new CommandIndex(Map.of(), Map.of());
    }

    /** The index in {@code felixHome}, or an empty one when it is missing, unreadable or of another format. */
    static CommandIndex load(Path felixHome) {
        Map<String, Key> keys = new HashMap<>();
        Map<String, List<CommandComponents.Command>> commands = new HashMap<>();
        Map<String, Set<String>> provides = new HashMap<>();
        Map<String, Set<String>> references = new HashMap<>();
        try {
            List<String> lines = Files.readAllLines(felixHome.resolve(FILE), StandardCharsets.UTF_8);
            if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
                return empty();
            }
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.split("\t", -1);
                if (f.length < 3) {
                    return empty();
                }
                Key key = new Key(Long.parseLong(f[1]), Long.parseLong(f[2]));
                Key before = keys.putIfAbsent(f[0], key);
                if (before != null && !before.equals(key)) {
                    return empty();
                }
                if (f.length == 3) {
                    continue;
                }
                switch (f[3]) {
                    case "C" -> {
                        if (f.length != 8 || f[4].isEmpty() || f[5].isEmpty() || f[6].isEmpty() || f[7].isEmpty()) {
                            return empty();
                        }
                        commands.computeIfAbsent(f[0], k -> new ArrayList<>()).add(new CommandComponents.Command(
                                f[4], f[5], Arrays.asList(f[6].split(",")), list(f[7])));
                    }
                    case "P", "R" -> {
                        Map<String, Set<String>> to = f[3].equals("P") ? provides : references;
                        if (f.length != 5 || f[4].isEmpty() || to.containsKey(f[0])) {
                            return empty();
                        }
                        to.put(f[0], new HashSet<>(Arrays.asList(f[4].split(","))));
                    }
                    default -> {
                        return empty();
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            return empty();
        }
        Map<String, CommandComponents.Descriptions> descriptions = new HashMap<>();
        for (String jar : keys.keySet()) {
            descriptions.put(jar, new CommandComponents.Descriptions(commands.getOrDefault(jar, List.of()),
                    provides.getOrDefault(jar, Set.of()), references.getOrDefault(jar, Set.of())));
        }
        return new CommandIndex(keys, descriptions);
    }

    /** An interface list field: {@link #NONE} or comma-separated names. */
    private static List<String> list(String field) {
        return field.equals(NONE) ? List.of() : Arrays.asList(field.split(","));
    }

    /** What the descriptions of {@code jar} say: from the index when it was made from this very file. */
    CommandComponents.Descriptions of(Path jar) throws IOException {
        String name = jar.getFileName().toString();
        Key key = keys.get(name);
        if (key != null && key.equals(keyOf(jar))) {
            return descriptions.get(name);
        }
        return CommandComponents.of(jar);
    }

    private static Key keyOf(Path jar) throws IOException {
        return new Key(Files.size(jar), Files.getLastModifiedTime(jar).toMillis());
    }

    /** Writes the index of every {@code io.kickplug.*} bundle in {@code bundleDir} to {@code index}. */
    static void write(Path bundleDir, Path index) throws IOException {
        TreeMap<String, Path> jars = new TreeMap<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(bundleDir, "*.jar")) {
            for (Path jar : dir) {
                BundleSet.Jar bundle = BundleSet.read(jar);
                if (bundle != null && bundle.isProject()) {
                    jars.put(jar.getFileName().toString(), jar);
                }
            }
        }
        StringBuilder out = new StringBuilder(HEADER).append('\n');
        for (Map.Entry<String, Path> e : jars.entrySet()) {
            Key key = keyOf(e.getValue());
            String prefix = e.getKey() + "\t" + key.size() + "\t" + key.mtime();
            CommandComponents.Descriptions d = CommandComponents.of(e.getValue());
            out.append(prefix).append('\n');
            for (CommandComponents.Command c : d.commands()) {
                out.append(prefix).append("\tC\t").append(field(c.componentName(), e.getKey())).append('\t')
                        .append(field(c.scope(), e.getKey())).append('\t').append(names(c.functions(), e.getKey()))
                        .append('\t').append(c.references().isEmpty() ? NONE : names(c.references(), e.getKey()))
                        .append('\n');
            }
            if (!d.provides().isEmpty()) {
                out.append(prefix).append("\tP\t").append(names(d.provides(), e.getKey())).append('\n');
            }
            if (!d.references().isEmpty()) {
                out.append(prefix).append("\tR\t").append(names(d.references(), e.getKey())).append('\n');
            }
        }
        Path tmp = index.resolveSibling(index.getFileName() + ".tmp");
        Files.writeString(tmp, out, StandardCharsets.UTF_8);
        Files.move(tmp, index, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    private static String names(java.util.Collection<String> names, String jar) throws IOException {
        StringBuilder s = new StringBuilder();
        for (String n : names) {
            if (n.contains(",")) {
                throw new IOException("cannot index the name '" + n + "' of " + jar);
            }
            s.append(s.length() == 0 ? "" : ",").append(field(n, jar));
        }
        return s.toString();
    }

    private static String field(String value, String jar) throws IOException {
        if (value.isEmpty() || value.equals(NONE) || value.contains("\t") || value.contains("\n")
                || value.contains("\r")) {
            throw new IOException("cannot index the name '" + value + "' of " + jar);
        }
        return value;
    }

    /** {@code CommandIndex BUNDLE-DIR INDEX-FILE}: run at package time. */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: CommandIndex BUNDLE-DIR INDEX-FILE");
            System.exit(2);
        }
        write(Path.of(args[0]), Path.of(args[1]));
    }
}
