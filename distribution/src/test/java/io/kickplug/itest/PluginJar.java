package io.kickplug.itest;

import aQute.bnd.osgi.Builder;
import aQute.bnd.osgi.Jar;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.itest.plugin.EndOfBatchStrategy;
import java.io.File;
import java.nio.file.Path;

/**
 * Builds the test plugin bundle with bnd's Builder, as a plugin project's build would: the package of
 * {@link EndOfBatchStrategy} from the test classes, its DS component description from the annotations, and its
 * imports versioned against the api jar on the classpath.
 */
final class PluginJar {

    static final String SYMBOLIC_NAME = "io.kickplug.itest.endofbatch";

    private PluginJar() {
    }

    /** Writes the bundle to {@code file} at {@code version}; fails on any bnd error or warning. */
    static Path build(Path file, String version) throws Exception {
        try (Builder b = new Builder()) {
            b.setProperty("Bundle-SymbolicName", SYMBOLIC_NAME);
            b.setProperty("Bundle-Version", version);
            b.setProperty("-includepackage", EndOfBatchStrategy.class.getPackageName());
            b.setProperty("-dsannotations", EndOfBatchStrategy.class.getName());
            b.setProperty("-noextraheaders", "true");
            b.setProperty("-reproducible", "true");
            b.addClasspath(location(EndOfBatchStrategy.class));
            b.addClasspath(location(CompletionNotifier.class));
            try (Jar jar = b.build()) {
                if (!b.getErrors().isEmpty()) {
                    throw new IllegalStateException("bnd: " + b.getErrors());
                }
                String imports = jar.getManifest().getMainAttributes().getValue("Import-Package");
                if (imports == null || !imports.contains("io.kickplug.api.notify")) {
                    throw new IllegalStateException("the plugin does not import the api: " + imports);
                }
                if (jar.getResource("OSGI-INF/" + EndOfBatchStrategy.class.getName() + ".xml") == null) {
                    throw new IllegalStateException("no component description in the plugin: " + jar.getResources()
                            .keySet());
                }
                jar.write(file.toFile());
            }
        }
        return file;
    }

    private static File location(Class<?> c) throws Exception {
        return new File(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    }
}
