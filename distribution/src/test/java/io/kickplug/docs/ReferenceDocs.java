package io.kickplug.docs;

import io.kickplug.launcher.CommandComponents;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;

/**
 * The generator of docs/reference/commands.md and docs/reference/configuration.md, from the bundle jars the
 * distribution runs ({@code target/felix/bundle}): the command components in their DS XML
 * ({@link CommandComponents}), the components' classes by reflection through a class loader over those jars (and
 * the framework's, for the OSGi types in signatures), and their metatype XML. ReferenceDocsIT compares its output
 * with the committed pages; {@code scripts/reference-docs.sh} rewrites them.
 */
public final class ReferenceDocs {

    /**
     * The two pages, and the commands that {@link ReferencePages#GROUPS} does not place (they land under
     * {@link ReferencePages#OTHER}).
     */
    public record Pages(String commands, String configuration, List<String> ungrouped) {
    }

    private ReferenceDocs() {
    }

    /**
     * Both pages from the jars in {@code felixDir/bundle} (the framework jar in {@code felixDir} joins the class
     * loader).
     */
    public static Pages generate(Path felixDir) throws IOException {
        List<Path> bundles = jars(felixDir.resolve("bundle"));
        if (bundles.isEmpty()) {
            throw new IOException("no bundle jars in " + felixDir.resolve("bundle") + " (build the distribution first)");
        }
        List<Path> classPath = new ArrayList<>(bundles);
        classPath.addAll(jars(felixDir));
        List<CommandDocs.Command> commands = new ArrayList<>();
        List<MetatypeDocs.Pid> pids = new ArrayList<>();
        try (URLClassLoader loader = new URLClassLoader(urls(classPath), ClassLoader.getPlatformClassLoader())) {
            for (Path jar : bundles) {
                String bundle;
                try (JarFile file = new JarFile(jar.toFile())) {
                    bundle = symbolicName(file);
                    pids.addAll(MetatypeDocs.read(file, bundle));
                }
                for (CommandComponents.Implemented c : CommandComponents.implementationsOf(jar)) {
                    Class<?> type = load(loader, c.implementation(), jar);
                    for (String function : c.command().functions()) {
                        commands.add(CommandDocs.describe(c.command().scope(), function, bundle, type));
                    }
                }
            }
        }
        List<String> ungrouped = commands.stream().filter(c -> ReferencePages.group(c.function())
                .equals(ReferencePages.OTHER)).map(CommandDocs.Command::name).sorted().toList();
        return new Pages(ReferencePages.commands(commands), ReferencePages.configuration(pids), ungrouped);
    }

    private static Class<?> load(ClassLoader loader, String name, Path jar) {
        try {
            return Class.forName(name, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalStateException("cannot load command class " + name + " of " + jar + ": " + e, e);
        }
    }

    private static String symbolicName(JarFile jar) throws IOException {
        String bsn = jar.getManifest() == null ? null
                : jar.getManifest().getMainAttributes().getValue("Bundle-SymbolicName");
        if (bsn == null) {
            return jar.getName();
        }
        int params = bsn.indexOf(';');
        return (params < 0 ? bsn : bsn.substring(0, params)).strip();
    }

    private static List<Path> jars(Path dir) throws IOException {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, "*.jar")) {
            s.forEach(out::add);
        }
        out.sort(null);
        return out;
    }

    private static URL[] urls(List<Path> jars) {
        URL[] urls = new URL[jars.size()];
        for (int i = 0; i < urls.length; i++) {
            try {
                urls[i] = jars.get(i).toUri().toURL();
            } catch (MalformedURLException e) {
                throw new UncheckedIOException(e);
            }
        }
        return urls;
    }
}
