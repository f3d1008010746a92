package io.kickplug.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;

/**
 * The plugins that {@code kp:install} kept in a state folder ({@code --state DIR}): installed (or found in the reused
 * bundle cache) and started at every start, after the distribution's bundles. A plugin kept by the cache whose jar is
 * gone (uninstalled while the runtime was down, or by hand) is uninstalled. The shell bundle's
 * {@code io.kickplug.shell.Plugins} uses the same location prefix and folder property.
 */
final class Plugins {

    static final String DIR_PROPERTY = "kickplug.plugins.dir";
    static final String LOCATION_PREFIX = "kickplug-plugin:";

    private Plugins() {
    }

    /** Installs and starts every {@code *.jar} in {@code dir}; a plugin that fails is reported and skipped. */
    static void startKept(BundleContext context, Path dir, PrintStream err) {
        Map<String, Bundle> cached = new HashMap<>();
        for (Bundle b : context.getBundles()) {
            if (b.getLocation().startsWith(LOCATION_PREFIX)) {
                cached.put(b.getLocation(), b);
            }
        }
        List<Path> jars = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, "*.jar")) {
                s.forEach(jars::add);
            } catch (IOException e) {
                err.println("warning: cannot read the plugins in " + dir + ": " + Errors.message(e));
            }
        }
        jars.sort(null);
        List<Bundle> start = new ArrayList<>();
        for (Path jar : jars) {
            String name = jar.getFileName().toString();
            String location = LOCATION_PREFIX + name.substring(0, name.length() - ".jar".length());
            Bundle b = cached.remove(location);
            try {
                if (b == null) {
                    try (InputStream in = Files.newInputStream(jar)) {
                        b = context.installBundle(location, in);
                    }
                } else if (b.getLastModified() < Files.getLastModifiedTime(jar).toMillis()) {
                    try (InputStream in = Files.newInputStream(jar)) {
                        b.update(in); // the jar was replaced while the runtime was down
                    }
                }
                start.add(b);
            } catch (IOException | BundleException | RuntimeException e) {
                err.println("warning: cannot install the plugin " + jar + ": " + Errors.message(e));
            }
        }
        for (Bundle gone : cached.values()) {
            try {
                gone.uninstall();
            } catch (BundleException | RuntimeException e) {
                err.println("warning: cannot uninstall the plugin " + gone.getSymbolicName() + ": " + Errors.message(e));
            }
        }
        for (Bundle b : start) {
            try {
                b.start(Bundle.START_TRANSIENT);
            } catch (BundleException | RuntimeException e) {
                err.println("warning: cannot start the plugin " + b.getSymbolicName() + ": " + Errors.message(e));
            }
        }
    }
}
