package io.kickplug.launcher;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a start reads from the bundle jars before Felix runs (each jar's manifest facts, in start order, and the
 * command components of the project bundles), kept in a reusable state folder ({@link StateDir#facts}) so that
 * a start from the bundle cache opens no jar for it: reading 22 manifests and the command index was about a
 * twentieth of a daemon's start-up CPU time.
 *
 * <p>The file is only ever read when the state folder's record says the jars are exactly those the cache was
 * made from (path, size, modification time, inode: {@link StateDir#reusable}), and it is written before that
 * record; so it describes these very jars, or it is not used. A file that does not name exactly the jars there
 * are, or that cannot be parsed, is ignored (the jars are read as before).
 *
 * <p>Format {@value #VERSION} (named by the header line: a file of another format is ignored like a damaged one),
 * tab-separated, one line per jar in start order, then what the component descriptions of the project bundles
 * say: {@code B file symbolic-name version fragment(0|1)}, {@code N file} (a jar that is not a bundle),
 * {@code C file component scope function,function... interface,interface...} per command component (the
 * interfaces it references, or {@code -}), {@code P file interface,interface...} and
 * {@code R file interface,interface...} for the interfaces a bundle's components provide and reference (only when
 * there are some). Format 1 had no interfaces: a launcher that read it would start the guest bundle of a daemon
 * whose statements use kp:io only after them.
 */
final class BundleFacts {

    static final int VERSION = 2;
    private static final String HEADER = "# kickplug bundle facts " + VERSION;
    /** The interface list of a command component that references none. */
    private static final String NONE = "-";

    /** The bundle set and what the component descriptions of each project bundle say (by jar path). */
    record Facts(BundleSet.Contents contents, Map<Path, CommandComponents.Descriptions> descriptions) {
    }

    private BundleFacts() {
    }

    /** Every {@code *.jar} in {@code dir}, sorted: what the state record is made of, without opening them. */
    static List<Path> list(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new IOException("no bundle directory " + dir);
        }
        List<Path> jars = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            for (Path p : stream) {
                if (p.getFileName().toString().endsWith(".jar")) {
                    jars.add(p);
                }
            }
        }
        jars.sort(null);
        return jars;
    }

    /** The facts as text ({@code descriptions} keyed by jar path; jars without an entry have no components). */
    static String format(BundleSet.Contents contents, Map<Path, CommandComponents.Descriptions> descriptions)
            throws IOException {
        StringBuilder s = new StringBuilder(HEADER).append('\n');
        for (BundleSet.Jar jar : contents.bundles()) {
            s.append("B\t").append(field(jar.path().getFileName().toString())).append('\t')
                    .append(field(jar.symbolicName())).append('\t').append(field(jar.version())).append('\t')
                    .append(jar.fragment() ? '1' : '0').append('\n');
        }
        for (Path p : contents.notBundles()) {
            s.append("N\t").append(field(p.getFileName().toString())).append('\n');
        }
        for (BundleSet.Jar jar : contents.bundles()) {
            CommandComponents.Descriptions d = descriptions.getOrDefault(jar.path(), CommandComponents.Descriptions.NONE);
            String file = field(jar.path().getFileName().toString());
            for (CommandComponents.Command c : d.commands()) {
                s.append("C\t").append(file).append('\t')
                        .append(field(c.componentName())).append('\t').append(field(c.scope())).append('\t')
                        .append(names(c.functions())).append('\t')
                        .append(c.references().isEmpty() ? NONE : names(c.references())).append('\n');
            }
            if (!d.provides().isEmpty()) {
                s.append("P\t").append(file).append('\t').append(names(d.provides())).append('\n');
            }
            if (!d.references().isEmpty()) {
                s.append("R\t").append(file).append('\t').append(names(d.references())).append('\n');
            }
        }
        return s.toString();
    }

    private static String names(Collection<String> names) throws IOException {
        StringBuilder s = new StringBuilder();
        for (String n : names) {
            if (n.contains(",") || n.equals(NONE)) {
                throw new IOException("cannot record the name '" + n + "'");
            }
            s.append(s.length() == 0 ? "" : ",").append(field(n));
        }
        return s.toString();
    }

    private static String field(String value) throws IOException {
        if (value.isEmpty() || value.indexOf('\t') >= 0 || value.indexOf('\n') >= 0 || value.indexOf('\r') >= 0) {
            throw new IOException("cannot record the bundle fact '" + value + "'");
        }
        return value;
    }

    /**
     * The facts in {@code file} for the jars {@code jars} of {@code dir}, or {@code null} when the file is missing,
     * unreadable, or does not name exactly these jars.
     */
    static Facts read(Path file, Path dir, List<Path> jars) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            return null;
        }
        if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
            return null;
        }
        Set<String> names = new HashSet<>();
        for (Path jar : jars) {
            names.add(jar.getFileName().toString());
        }
        Set<String> seen = new HashSet<>();
        List<BundleSet.Jar> bundles = new ArrayList<>();
        List<Path> notBundles = new ArrayList<>();
        Map<String, Path> bundlePaths = new HashMap<>();
        Map<Path, List<CommandComponents.Command>> commands = new HashMap<>();
        Map<Path, Set<String>> provides = new HashMap<>();
        Map<Path, Set<String>> references = new HashMap<>();
        for (int i = 1; i < lines.size(); i++) {
            String[] f = lines.get(i).split("\t", -1);
            switch (f[0]) {
                case "B" -> {
                    if (f.length != 5 || !names.contains(f[1]) || !seen.add(f[1])
                            || !(f[4].equals("0") || f[4].equals("1"))) {
                        return null;
                    }
                    Path path = dir.resolve(f[1]);
                    bundles.add(new BundleSet.Jar(path, f[2], f[3], f[4].equals("1")));
                    bundlePaths.put(f[1], path);
                }
                case "N" -> {
                    if (f.length != 2 || !names.contains(f[1]) || !seen.add(f[1])) {
                        return null;
                    }
                    notBundles.add(dir.resolve(f[1]));
                }
                case "C" -> {
                    Path path = f.length == 6 ? bundlePaths.get(f[1]) : null;
                    if (path == null || f[2].isEmpty() || f[3].isEmpty() || f[4].isEmpty() || f[5].isEmpty()) {
                        return null;
                    }
                    commands.computeIfAbsent(path, k -> new ArrayList<>()).add(new CommandComponents.Command(f[2],
                            f[3], Arrays.asList(f[4].split(",")),
                            f[5].equals(NONE) ? List.of() : Arrays.asList(f[5].split(","))));
                }
                case "P", "R" -> {
                    Path path = f.length == 3 ? bundlePaths.get(f[1]) : null;
                    Map<Path, Set<String>> to = f[0].equals("P") ? provides : references;
                    if (path == null || f[2].isEmpty() || to.containsKey(path)) {
                        return null;
                    }
                    to.put(path, new HashSet<>(Arrays.asList(f[2].split(","))));
                }
                default -> {
                    return null;
                }
            }
        }
        if (!seen.equals(names)) {
            return null;
        }
        Map<Path, CommandComponents.Descriptions> descriptions = new HashMap<>();
        for (Path path : bundlePaths.values()) {
            if (commands.containsKey(path) || provides.containsKey(path) || references.containsKey(path)) {
                descriptions.put(path, new CommandComponents.Descriptions(commands.getOrDefault(path, List.of()),
                        provides.getOrDefault(path, Set.of()), references.getOrDefault(path, Set.of())));
            }
        }
        return new Facts(new BundleSet.Contents(bundles, notBundles), descriptions);
    }
}
