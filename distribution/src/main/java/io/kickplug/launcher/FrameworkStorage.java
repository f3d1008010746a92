package io.kickplug.launcher;

import io.kickplug.launcher.Launcher.StartupException;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.felix.framework.FrameworkFactory;
import org.osgi.framework.Constants;

/**
 * Where the framework keeps its bundle cache and ConfigAdmin's configurations: a state folder ({@code --state DIR}
 * or a daemon's default one, see {@link StateDir}), {@code --cache DIR}, or a temporary cache; the framework
 * properties that say so, and the clean-up at exit ({@link #close}).
 */
final class FrameworkStorage {

    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger("kickplug.launcher");
    /** System properties with these prefixes are passed on as framework properties. */
    private static final List<String> PASSED_PREFIXES = List.of("felix.", "org.osgi.", "gosh.", "ds.");

    private final Options options;
    private final Path felixHome;
    private final PrintStream err;
    private Path cacheDir;
    private boolean temporaryCache;
    /** The persistent bundle cache, or {@code null} (a temporary cache or {@code --cache}). */
    private StateDir state;
    /** A daemon with a state folder sweeps stale temporary files after it is ready ({@link Launcher}). */
    private boolean sweepLater;

    FrameworkStorage(Options options, Path felixHome, PrintStream err) {
        this.options = options;
        this.felixHome = felixHome;
        this.err = err;
    }

    /** The persistent bundle cache once {@link #frameworkConfig} opened it, else {@code null}. */
    StateDir state() {
        return state;
    }

    /** Whether stale temporary files are to be swept once the daemon is ready (rather than at start). */
    boolean sweepLater() {
        return sweepLater;
    }

    /**
     * Deletes a temporary cache and a state folder's configurations that do not outlive the run, then releases the
     * state folder; safe before {@link #frameworkConfig}. Called once the framework has stopped.
     */
    void close() {
        if (temporaryCache && cacheDir != null) {
            deleteTree(cacheDir);
        }
        if (state != null) {
            try {
                state.resetConfig();
            } catch (IOException e) {
                err.println("warning: could not delete " + state.config() + ": " + Errors.message(e));
            }
            state.close();
        }
    }

    /**
     * The framework properties: system properties with a passed prefix, then where the bundle cache and the
     * configurations live; opens the state folder or makes the cache folder on the way.
     */
    Map<String, String> frameworkConfig(List<Path> jars) throws StartupException {
        Map<String, String> config = new HashMap<>();
        for (String key : System.getProperties().stringPropertyNames()) {
            if (PASSED_PREFIXES.stream().anyMatch(key::startsWith)) {
                config.put(key, System.getProperty(key));
            }
        }
        if (options.cache() == null) {
            state = openState(jars);
        }
        if (state != null) {
            if (options.daemon()) {
                sweepLater = true; // not on the way to ready (Launcher#startLater)
            } else {
                for (String warning : TempFiles.sweep(Path.of(System.getProperty("java.io.tmpdir")),
                        Path.of("/dev/shm"))) {
                    err.println("warning: " + warning);
                }
            }
            if (System.getProperty(TempFiles.JUNIXSOCKET_TMPDIR) == null) {
                try {
                    Files.createDirectories(state.nativeDir());
                } catch (IOException e) {
                    throw new StartupException("cannot use the state directory " + state.dir() + ": "
                            + Errors.message(e), e);
                }
                System.setProperty(TempFiles.JUNIXSOCKET_TMPDIR, state.nativeDir().toString());
            }
            config.put(Constants.FRAMEWORK_STORAGE, state.felixStorage().toString());
            if (!state.reusable()) {
                config.put(Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT);
            }
            // SCR keeps the parsed component descriptions in the cache (keyed by bundle id and install time).
            config.putIfAbsent("ds.cache.metadata", "true");
            // The disks and exports: kept in a state folder named by --state (a restart serves them again, with
            // their settings); in a daemon's default folder (a cache) emptied at start and exit.
            config.putIfAbsent("felix.cm.dir", state.config().toString());
            if (state.keepsConfig()) {
                // kp:install keeps plugin jars here; installed and started again below at every start.
                config.putIfAbsent(Plugins.DIR_PROPERTY, state.plugins().toString());
            }
        } else {
            try {
                if (options.cache() != null) {
                    cacheDir = options.cache().toAbsolutePath();
                    Files.createDirectories(cacheDir);
                } else {
                    cacheDir = TempFiles.createCache(err); // also removes what killed launchers left behind
                    temporaryCache = true;
                }
            } catch (IOException e) {
                throw new StartupException("cannot create the Felix cache directory: " + Errors.message(e), e);
            }
            // The bundle cache in DIR/felix (for a temporary cache, beside the lock and pid files of TempFiles).
            config.put(Constants.FRAMEWORK_STORAGE, TempFiles.felixStorage(cacheDir));
            // The launcher installs the bundle set itself on every run, so old cache contents must not linger.
            config.put(Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT);
            // ... but ConfigAdmin's configurations (every attached disk is one) live beside the bundle cache, so
            // that a runtime started again with the same --cache DIR attaches the same disks.
            config.putIfAbsent("felix.cm.dir", cacheDir.resolve("config").toString());
        }
        if (options.daemon()) {
            // Resolving 18 bundles gains nothing from a pool, whose threads would idle for the daemon's life.
            config.putIfAbsent("felix.resolver.parallelism", "1");
        }
        if (!options.interactive()) {
            // No console: gosh neither reads stdin nor stops the framework at end of input.
            config.put("gosh.args", "--nointeractive");
        }
        return config;
    }

    /**
     * The persistent bundle cache: {@code --state DIR}, or for a daemon without {@code --state} the default one
     * ({@link #defaultState}), which falls back to a temporary cache when it cannot be made or another daemon uses it.
     */
    private StateDir openState(List<Path> bundleJars) throws StartupException {
        Path dir = options.state();
        boolean explicit = dir != null;
        if (Options.NO_STATE.equals(dir) || (!explicit && !options.daemon())) {
            return null;
        }
        if (!explicit) {
            dir = defaultState(felixHome, System.getenv());
            if (dir == null) {
                return null;
            }
        }
        List<Path> jars = new ArrayList<>(bundleJars);
        jars.addAll(runtimeJars());
        try {
            StateDir opened = StateDir.open(dir, jars, explicit);
            if (opened == null) {
                if (explicit) {
                    throw new StartupException("the state directory " + dir + " is in use by another process", null);
                }
                Path busy = dir;
                LOG.fine(() -> "the bundle cache " + busy + " is in use by another process: a temporary one instead");
            }
            return opened;
        } catch (IOException e) {
            if (explicit) {
                throw new StartupException("cannot use the state directory " + dir + ": " + Errors.message(e), e);
            }
            Path failed = dir;
            LOG.fine(() -> "cannot use the bundle cache " + failed + " (" + Errors.message(e) + "): a temporary one instead");
            return null;
        }
    }

    /**
     * A daemon's default bundle cache: {@code $XDG_STATE_HOME/kickplug/felix-HASH} (else
     * {@code $HOME/.local/state/...}), HASH of the distribution's folder, so that two installed distributions do not
     * throw each other's cache away; {@code null} without either variable.
     */
    static Path defaultState(Path felixHome, Map<String, String> env) {
        String xdg = env.get("XDG_STATE_HOME");
        Path base;
        if (xdg != null && xdg.startsWith("/")) {
            base = Path.of(xdg);
        } else if (env.get("HOME") != null && env.get("HOME").startsWith("/")) {
            base = Path.of(env.get("HOME"), ".local", "state");
        } else {
            return null;
        }
        String home = felixHome.toAbsolutePath().normalize().toString();
        return base.resolve("kickplug").resolve("felix-" + Integer.toHexString(home.hashCode()));
    }

    /** The framework jar and the launcher's own jar (or classes folder), which the cache depends on too. */
    private static List<Path> runtimeJars() {
        List<Path> jars = new ArrayList<>();
        for (Class<?> c : List.of(FrameworkFactory.class, Launcher.class)) {
            java.security.CodeSource source = c.getProtectionDomain().getCodeSource();
            if (source != null && source.getLocation() != null) {
                try {
                    Path p = Path.of(source.getLocation().toURI());
                    if (Files.isRegularFile(p)) {
                        jars.add(p);
                    }
                } catch (java.net.URISyntaxException | IllegalArgumentException e) {
                    // not a file: nothing to compare
                }
            }
        }
        return jars;
    }

    private void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try {
            FileTree.delete(root);
        } catch (IOException | UncheckedIOException e) {
            err.println("warning: could not delete " + root + ": " + Errors.message(e));
        }
    }
}
