package io.kickplug.shell;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.jar.JarInputStream;
import java.util.jar.Manifest;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.Version;
import org.osgi.framework.wiring.FrameworkWiring;

/**
 * Installs and uninstalls plugin bundles in the running framework ({@code kp:install}, {@code kp:uninstall}) and
 * lists the plugin services registered now, with the bundle providing each.
 *
 * <p>A plugin is installed under the location {@value #LOCATION_PREFIX}{@code <symbolic name>}, from the jar's bytes,
 * so it is told apart from the distribution's bundles, which {@code kp:uninstall} refuses. With {@code --state DIR}
 * the launcher names a folder ({@value #DIR_PROPERTY}) where the jar is kept as {@code <symbolic name>.jar}; the
 * launcher installs and starts every jar there at the next start, so a plugin survives a restart. A plugin bundle is
 * started transiently: the launcher, not the framework's autostart, starts it again.
 */
final class Plugins {

    /** Framework property: the folder where installed plugin jars are kept, set with {@code --state DIR}. */
    static final String DIR_PROPERTY = "kickplug.plugins.dir";
    /** Location prefix of plugin bundles; the launcher uses the same. */
    static final String LOCATION_PREFIX = "kickplug-plugin:";
    /** Refuse a jar larger than this (a plugin is a small bundle; the whole jar is read into memory). */
    static final long MAX_JAR_BYTES = 64L << 20;
    /** How long kp:install waits for the bundle's components to register their services. */
    static final long REGISTER_WAIT_MILLIS = 2_000;

    /** What kp:install did. */
    record Installed(String bundle, String version, long bundleId, String source, boolean updated, boolean kept,
            List<Provided> registered) {
    }

    /** What kp:uninstall did. */
    record Uninstalled(String bundle, String version, long bundleId, List<Provided> registered) {
    }

    private final BundleContext context;

    Plugins(BundleContext context) {
        this.context = context;
    }

    /** The folder where plugin jars are kept, or {@code null} without {@code --state DIR}. */
    Path keptDir() {
        String dir = context.getProperty(DIR_PROPERTY);
        return dir == null || dir.isBlank() ? null : Path.of(dir);
    }

    static boolean isPlugin(Bundle b) {
        return b.getLocation().startsWith(LOCATION_PREFIX);
    }

    /**
     * Installs (or, for a plugin of the same symbolic name, updates) the bundle jar at {@code source}, a path or a
     * URL, and starts it.
     */
    Installed install(String source) {
        byte[] jar = read(source);
        Manifest manifest = manifest(jar, source);
        String bsn = symbolicName(manifest, source);
        Bundle existing = null;
        for (Bundle b : context.getBundles()) {
            if (bsn.equals(b.getSymbolicName())) {
                if (!isPlugin(b)) {
                    throw new IllegalArgumentException("'" + bsn + "' is a bundle of the distribution, not a plugin: "
                            + "update it with kp:swap or felix:update");
                }
                existing = b;
            }
        }
        Path dir = keptDir();
        if (dir != null) {
            keep(dir, bsn, jar);
        }
        Bundle bundle;
        try {
            if (existing != null) {
                existing.update(new ByteArrayInputStream(jar));
                bundle = existing;
                refresh(List.of(bundle));
            } else {
                bundle = context.installBundle(LOCATION_PREFIX + bsn, new ByteArrayInputStream(jar));
            }
            bundle.start(Bundle.START_TRANSIENT);
        } catch (BundleException | IllegalStateException e) {
            throw new IllegalStateException("cannot " + (existing != null ? "update" : "install") + " " + bsn + " from "
                    + source + ": " + e.getMessage(), e);
        }
        Bundle b = bundle;
        List<Provided> registered = BoundedWait.until(() -> registeredBy(b), list -> !list.isEmpty(),
                REGISTER_WAIT_MILLIS, "the services of " + bsn);
        return new Installed(bsn, bundle.getVersion().toString(), bundle.getBundleId(), source, existing != null,
                dir != null, registered);
    }

    /** Uninstalls the plugin named by its symbolic name or bundle id; a distribution bundle is refused. */
    Uninstalled uninstall(String nameOrId) {
        Bundle bundle = find(nameOrId);
        if (!isPlugin(bundle)) {
            throw new IllegalArgumentException("'" + bundle.getSymbolicName() + "' [" + bundle.getBundleId()
                    + "] is a bundle of the distribution, not a plugin: kp:uninstall removes only what kp:install "
                    + "installed (felix:stop stops any bundle)");
        }
        List<Provided> registered = registeredBy(bundle);
        String bsn = bundle.getSymbolicName();
        Version version = bundle.getVersion();
        long id = bundle.getBundleId();
        try {
            bundle.uninstall();
        } catch (BundleException e) {
            throw new IllegalStateException("cannot uninstall " + bsn + ": " + e.getMessage(), e);
        }
        refresh(List.of(bundle));
        Path dir = keptDir();
        if (dir != null) {
            try {
                Files.deleteIfExists(dir.resolve(bsn + ".jar"));
            } catch (IOException e) {
                throw new IllegalStateException("uninstalled " + bsn + ", but its kept jar stays in " + dir + ": "
                        + e.getMessage(), e);
            }
        }
        return new Uninstalled(bsn, version.toString(), id, registered);
    }

    private Bundle find(String nameOrId) {
        String key = nameOrId.trim();
        if (!key.isEmpty() && key.chars().allMatch(Character::isDigit)) {
            Bundle b = key.length() > 18 ? null : context.getBundle(Long.parseLong(key));
            if (b == null) {
                throw new IllegalArgumentException("no bundle with id " + key);
            }
            return b;
        }
        for (Bundle b : context.getBundles()) {
            if (key.equals(b.getSymbolicName())) {
                return b;
            }
        }
        throw new IllegalArgumentException("no bundle named '" + key + "' (kp:plugins lists the plugins)");
    }

    /** The plugin services {@code bundle} registers now. */
    List<Provided> registeredBy(Bundle bundle) {
        List<Provided> out = new ArrayList<>();
        ServiceReference<?>[] refs;
        try {
            refs = bundle.getRegisteredServices();
        } catch (IllegalStateException uninstalled) {
            return out;
        }
        if (refs != null) {
            for (ServiceReference<?> r : refs) {
                Provided p = provided(r);
                if (p != null) {
                    out.add(p);
                }
            }
        }
        out.sort(ORDER);
        return out;
    }

    /** The services of {@code kind} registered now, by name. */
    List<Provided> all(PluginKind kind) {
        List<Provided> out = new ArrayList<>();
        ServiceReference<?>[] refs;
        try {
            refs = context.getAllServiceReferences(kind.serviceClass, null);
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
        if (refs != null) {
            for (ServiceReference<?> r : refs) {
                Provided p = provided(r);
                if (p != null) {
                    out.add(p);
                }
            }
        }
        out.sort(ORDER);
        return out;
    }

    /** The plugin bundles installed now, with what each registers. */
    List<Bundle> plugins() {
        List<Bundle> out = new ArrayList<>();
        for (Bundle b : context.getBundles()) {
            if (isPlugin(b)) {
                out.add(b);
            }
        }
        return out;
    }

    private static final Comparator<Provided> ORDER = Comparator.comparing((Provided p) -> p.kind().ordinal())
            .thenComparing(Provided::name).thenComparing(Provided::bundleId);

    static Provided provided(ServiceReference<?> r) {
        PluginKind kind = PluginKind.of((String[]) r.getProperty(Constants.OBJECTCLASS));
        Bundle b = r.getBundle();
        if (kind == null || b == null) {
            return null;
        }
        Object name = r.getProperty(kind.property);
        return new Provided(kind, name == null ? "(unnamed)" : String.valueOf(name).trim(), b.getSymbolicName(),
                b.getVersion().toString(), b.getBundleId(), isPlugin(b));
    }

    private void refresh(List<Bundle> bundles) {
        FrameworkWiring wiring = context.getBundle(Constants.SYSTEM_BUNDLE_LOCATION).adapt(FrameworkWiring.class);
        if (wiring != null) {
            wiring.refreshBundles(bundles);
        }
    }

    private static void keep(Path dir, String bsn, byte[] jar) {
        try {
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, bsn, ".part");
            Files.write(tmp, jar);
            Files.move(tmp, dir.resolve(bsn + ".jar"), StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new IllegalStateException("cannot keep the plugin in " + dir + ": " + e.getMessage(), e);
        }
    }

    /** The jar's bytes from a path or a URL (file:, http:, jar:, ...), at most {@link #MAX_JAR_BYTES}. */
    static byte[] read(String source) {
        String s = source.trim();
        try (InputStream in = open(s)) {
            byte[] bytes = in.readNBytes((int) MAX_JAR_BYTES + 1);
            if (bytes.length > MAX_JAR_BYTES) {
                throw new IllegalArgumentException(source + " is larger than " + (MAX_JAR_BYTES >> 20) + " MiB");
            }
            return bytes;
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + source + ": " + e.getClass().getSimpleName() + " "
                    + e.getMessage());
        }
    }

    private static InputStream open(String s) throws IOException {
        if (s.matches("[A-Za-z][A-Za-z0-9+.-]*:.*") && !s.matches("[A-Za-z]:[\\\\/].*")) {
            try {
                return new URI(s).toURL().openStream();
            } catch (URISyntaxException | IllegalArgumentException e) {
                throw new IOException("not a URL: " + e.getMessage());
            }
        }
        return Files.newInputStream(Path.of(s));
    }

    static Manifest manifest(byte[] jar, String source) {
        try (JarInputStream in = new JarInputStream(new ByteArrayInputStream(jar))) {
            Manifest m = in.getManifest();
            if (m == null) {
                throw new IllegalArgumentException(source + " is not a bundle jar: it has no manifest");
            }
            return m;
        } catch (IOException e) {
            throw new IllegalArgumentException(source + " is not a jar: " + e.getMessage());
        }
    }

    static String symbolicName(Manifest m, String source) {
        String bsn = m.getMainAttributes().getValue(Constants.BUNDLE_SYMBOLICNAME);
        if (bsn == null || bsn.isBlank()) {
            throw new IllegalArgumentException(source + " is not a bundle: its manifest has no Bundle-SymbolicName");
        }
        String name = bsn.split(";", 2)[0].trim();
        if (!name.matches("[A-Za-z0-9_.-]+")) {
            throw new IllegalArgumentException(source + ": Bundle-SymbolicName '" + name + "' is not a plain name");
        }
        return name;
    }
}
