package io.kickplug.launcher;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The command components of the distribution's bundles, read from their component descriptions once at package
 * time ({@code felix/commands.idx}) instead of at every start: parsing them with the JDK's XML parser cost a
 * daemon about a tenth of its start-up CPU time. An entry counts only for the jar it was made from (same file
 * name, size and modification time); any other jar, or a missing or unreadable index, is read as before with
 * {@link CommandComponents#of}.
 *
 * <p>Format, one line per bundle and command component, tab-separated: {@code jar size mtime-millis}, then for a
 * command component {@code component-name scope function,function...}; a bundle without commands has a line
 * with the first three fields only.
 */
public final class CommandIndex {

    static final String FILE = "commands.idx";
    private static final String HEADER = "# kickplug command index 1";

    private record Key(long size, long mtime) {
    }

    private final Map<String, Key> keys;
    private final Map<String, List<CommandComponents.Command>> commands;

    private CommandIndex(Map<String, Key> keys, Map<String, List<CommandComponents.Command>> commands) {
        this.keys = keys;
        this.commands = commands;
    }

    /** The index in {@code felixHome}, or an empty one when it is missing or unreadable. */
    static CommandIndex load(Path felixHome) {
        Map<String, Key> keys = new HashMap<>();
        Map<String, List<CommandComponents.Command>> commands = new HashMap<>();
        try {
            List<String> lines = Files.readAllLines(felixHome.resolve(FILE), StandardCharsets.UTF_8);
            if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
                return new CommandIndex(Map.of(), Map.of());
            }
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.split("\t", -1);
                if (f.length != 3 && f.length != 6) {
                    return new CommandIndex(Map.of(), Map.of());
                }
                Key key = new Key(Long.parseLong(f[1]), Long.parseLong(f[2]));
                Key before = keys.putIfAbsent(f[0], key);
                if (before != null && !before.equals(key)) {
                    return new CommandIndex(Map.of(), Map.of());
                }
                List<CommandComponents.Command> list = commands.computeIfAbsent(f[0], k -> new ArrayList<>());
                if (f.length == 6) {
                    list.add(new CommandComponents.Command(f[3], f[4], Arrays.asList(f[5].split(","))));
                }
            }
        } catch (NoSuchFileException e) {
            return new CommandIndex(Map.of(), Map.of());
        } catch (IOException | RuntimeException e) {
            return new CommandIndex(Map.of(), Map.of());
        }
        return new CommandIndex(keys, commands);
    }

    /** The command components of {@code jar}: from the index when it was made from this very file. */
    List<CommandComponents.Command> of(Path jar) throws IOException {
        String name = jar.getFileName().toString();
        Key key = keys.get(name);
        if (key != null && key.equals(keyOf(jar))) {
            return List.copyOf(commands.get(name));
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
            List<CommandComponents.Command> list = CommandComponents.of(e.getValue());
            if (list.isEmpty()) {
                out.append(prefix).append('\n');
            }
            for (CommandComponents.Command c : list) {
                for (String field : List.of(c.componentName(), c.scope(), String.join(",", c.functions()))) {
                    if (field.isEmpty() || field.contains("\t") || field.contains("\n")) {
                        throw new IOException("cannot index component " + c + " of " + e.getKey());
                    }
                }
                out.append(prefix).append('\t').append(c.componentName()).append('\t').append(c.scope())
                        .append('\t').append(String.join(",", c.functions())).append('\n');
            }
        }
        Path tmp = index.resolveSibling(index.getFileName() + ".tmp");
        Files.writeString(tmp, out, StandardCharsets.UTF_8);
        Files.move(tmp, index, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
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
