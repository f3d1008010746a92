package io.kickplug.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarInputStream;
import java.util.jar.Manifest;

/**
 * The distribution's bundles ({@code felix/bundle/*.jar}) in start order: framework services first (SCR and
 * its OSGi API bundles, ConfigAdmin, log, metatype, Gogo runtime and commands), then the project bundles
 * ({@code io.kickplug.api} first), then the console ({@code org.apache.felix.gogo.shell}) last, because the
 * console starts reading input as soon as it is active.
 *
 * <p>The launcher and the Pax Exam test both use this class, so they boot the same set in the same order.
 */
public final class BundleSet {

    /** Start order of the known framework-service bundles; unknown ones follow, by name. */
    private static final List<String> SERVICES = List.of(
            "org.osgi.util.function",
            "org.osgi.util.promise",
            "org.osgi.service.component",
            "org.apache.felix.scr",
            "org.apache.felix.configadmin",
            "org.apache.felix.log",
            "org.apache.felix.metatype",
            "org.apache.felix.gogo.runtime",
            "org.apache.felix.gogo.command");

    /** Start order of the project bundles; unknown {@code io.kickplug.*} ones follow, by name. */
    private static final List<String> PROJECT = List.of(
            "io.kickplug.api",
            "io.kickplug.virtqueue.split",
            "io.kickplug.virtqueue.packed",
            "io.kickplug.virtio.transport",
            "io.kickplug.blk",
            "io.kickplug.poll",
            "io.kickplug.guest",
            "io.kickplug.shell");

    private static final String PROJECT_PREFIX = "io.kickplug.";
    private static final String CONSOLE = "org.apache.felix.gogo.shell";

    /** Where a bundle belongs in the start order. */
    public enum Group {
        SERVICES, PROJECT, CONSOLE
    }

    /** One bundle jar and what its manifest says. */
    public record Jar(Path path, String symbolicName, String version, boolean fragment) {

        public Group group() {
            if (symbolicName.equals(CONSOLE)) {
                return Group.CONSOLE;
            }
            return symbolicName.startsWith(PROJECT_PREFIX) ? Group.PROJECT : Group.SERVICES;
        }

        public boolean isProject() {
            return group() == Group.PROJECT;
        }
    }

    /** What a directory holds: bundles in start order, and jars that are not bundles (never installed). */
    public record Contents(List<Jar> bundles, List<Path> notBundles) {
        public Contents {
            bundles = List.copyOf(bundles);
            notBundles = List.copyOf(notBundles);
        }
    }

    private BundleSet() {
    }

    /** The bundle directory of a distribution home ({@code felix/}). */
    public static Path bundleDir(Path felixHome) {
        return felixHome.resolve("bundle");
    }

    /** Reads every {@code *.jar} in {@code dir} and orders the bundles for starting. */
    public static Contents scan(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new IOException("no bundle directory " + dir);
        }
        List<Jar> bundles = new ArrayList<>();
        List<Path> notBundles = new ArrayList<>();
        try (DirectoryStream<Path> jars = Files.newDirectoryStream(dir, "*.jar")) {
            for (Path path : jars) {
                Jar jar = read(path);
                if (jar == null) {
                    notBundles.add(path);
                } else {
                    bundles.add(jar);
                }
            }
        }
        bundles.sort(START_ORDER);
        notBundles.sort(Comparator.naturalOrder());
        return new Contents(bundles, notBundles);
    }

    /** The manifest facts of a jar, or {@code null} when it has no {@code Bundle-SymbolicName}. */
    public static Jar read(Path path) throws IOException {
        try (InputStream in = Files.newInputStream(path); JarInputStream jar = new JarInputStream(in)) {
            Manifest manifest = jar.getManifest();
            if (manifest == null) {
                return null;
            }
            Attributes main = manifest.getMainAttributes();
            String bsn = main.getValue("Bundle-SymbolicName");
            if (bsn == null || bsn.isBlank()) {
                return null;
            }
            int semicolon = bsn.indexOf(';');
            String name = (semicolon < 0 ? bsn : bsn.substring(0, semicolon)).strip();
            String version = main.getValue("Bundle-Version");
            return new Jar(path, name, version == null ? "0.0.0" : version.strip(),
                    main.getValue("Fragment-Host") != null);
        }
    }

    /** Services, then project bundles, then the console; within a group, the known order, then by name. */
    public static final Comparator<Jar> START_ORDER = Comparator.comparing(Jar::group)
            .thenComparingInt(BundleSet::knownIndex)
            .thenComparing(Jar::symbolicName)
            .thenComparing(Jar::version)
            .thenComparing(Jar::path);

    private static int knownIndex(Jar jar) {
        List<String> known = jar.group() == Group.PROJECT ? PROJECT : SERVICES;
        int index = known.indexOf(jar.symbolicName());
        return index < 0 ? known.size() : index;
    }
}
