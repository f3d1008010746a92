package io.kickplug.itest;

import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.cleanCaches;
import static org.ops4j.pax.exam.CoreOptions.composite;
import static org.ops4j.pax.exam.CoreOptions.frameworkProperty;
import static org.ops4j.pax.exam.CoreOptions.junitBundles;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;
import static org.ops4j.pax.exam.CoreOptions.workingDirectory;

import io.kickplug.launcher.BundleSet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import org.ops4j.pax.exam.Option;

/**
 * The distribution's bundle set as Pax Exam options: the jars in {@code target/felix/bundle}, in the
 * launcher's start order (the same {@link BundleSet} code), as file URLs. Never {@code mavenBundle()}: that
 * would test stale jars from the local repository (build-facts gotcha 13).
 *
 * <p>Kept out of the test class so that the test probe, which runs inside the framework, never links
 * against the launcher's classes.
 */
final class DistributionBundles {

    private DistributionBundles() {
    }

    static Path felixHome() {
        // failsafe sets the property; target/felix is where the module builds it (run from the module directory).
        return Path.of(System.getProperty("kickplug.felix.dir", "target/felix")).toAbsolutePath();
    }

    static List<BundleSet.Jar> jars() {
        try {
            BundleSet.Contents contents = BundleSet.scan(BundleSet.bundleDir(felixHome()));
            if (!contents.notBundles().isEmpty()) {
                throw new IllegalStateException("non-bundles in the distribution: " + contents.notBundles());
            }
            return contents.bundles();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Option[] options() {
        return jars().stream()
                .map(jar -> bundle(jar.path().toUri().toString()).start(!jar.fragment()))
                .toArray(Option[]::new);
    }

    /**
     * What every Pax Exam test here boots: the distribution's bundles, no console (failsafe talks to its fork over
     * stdin), quiet Pax logging, a clean framework cache in {@code directory}, JUnit, and {@code extra}.
     */
    static Option[] paxExam(String directory, Option... extra) {
        return new Option[] {
            composite(options()),
            frameworkProperty("gosh.args").value("--nointeractive"),
            systemProperty("org.ops4j.pax.logging.DefaultServiceLog.level").value("WARN"),
            workingDirectory(directory),
            cleanCaches(true),
            junitBundles(),
            composite(extra),
        };
    }

    static List<String> projectSymbolicNames() {
        return jars().stream().filter(BundleSet.Jar::isProject).map(BundleSet.Jar::symbolicName).toList();
    }
}
