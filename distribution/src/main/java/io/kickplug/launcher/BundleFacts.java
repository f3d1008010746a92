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
 * <p>Format, tab-separated, one line per jar in start order, then one per command component:
 * {@code B file symbolic-name version fragment(0|1)}, {@code N file} (a jar that is not a bundle),
 * {@code C file component scope function,function...}.
 */
final class BundleFacts {

    private static final String HEADER = "# kickplug bundle facts 1";

    /** The bundle set and the command components of each project bundle (by jar path). */
    record Facts(BundleSet.Contents contents, Map<Path, List<CommandComponents.Command>> commands) {
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

    /** The facts as text ({@code commands} keyed by jar path; jars without an entry have no commands). */
    static String format(BundleSet.Contents contents, Map<Path, List<CommandComponents.Command>> commands)
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
            for (CommandComponents.Command c : commands.getOrDefault(jar.path(), List.of())) {
                StringBuilder functions = new StringBuilder();
                for (String f : c.functions()) {
                    if (f.contains(",")) {
                        throw new IOException("a function name with a comma: " + f);
                    }
                    functions.append(functions.length() == 0 ? "" : ",").append(field(f));
                }
                s.append("C\t").append(field(jar.path().getFileName().toString())).append('\t')
                        .append(field(c.componentName())).append('\t').append(field(c.scope())).append('\t')
                        .append(functions).append('\n');
            }
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
                    Path path = f.length == 5 ? bundlePaths.get(f[1]) : null;
                    if (path == null || f[2].isEmpty() || f[3].isEmpty() || f[4].isEmpty()) {
                        return null;
                    }
                    List<CommandComponents.Command> list = commands.get(path);
                    if (list == null) {
                        list = new ArrayList<>();
                        commands.put(path, list);
                    }
                    list.add(new CommandComponents.Command(f[2], f[3], Arrays.asList(f[4].split(","))));
                }
                default -> {
                    return null;
                }
            }
        }
        if (!seen.equals(names)) {
            return null;
        }
        return new Facts(new BundleSet.Contents(bundles, notBundles), commands);
    }
}
