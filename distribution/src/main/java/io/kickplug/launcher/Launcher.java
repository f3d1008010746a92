package io.kickplug.launcher;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.felix.framework.FrameworkFactory;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.launch.Framework;

/**
 * Boots Felix on the distribution's bundle set and runs what the options ask for: the interactive console,
 * statements ({@code -c}, {@code -f}, {@code --demo}) with a real exit status, or a daemon.
 */
final class Launcher {

    /** How long startup may take before commands run anyway (a warning names what is missing). */
    static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(
            Long.getLong("kickplug.startup.timeout.seconds", 30));
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final String DEMO = "demo.gosh";
    /**
     * What gosh's login profile sets up, so statements behave as at the console: Gogo commands first,
     * BundleContext and System methods as commands ({@code bundle 0}, {@code system:getenv}), {@code e} to print
     * the last exception's stack trace.
     */
    private static final List<String> PREAMBLE = List.of(
            "SCOPE = 'gogo:*'",
            "addcommand context ${.context}",
            "addcommand system (((${.context} bundles) 0) loadclass java.lang.System)",
            "e = { $exception printStackTrace }");
    /** System properties with these prefixes are passed on as framework properties. */
    private static final List<String> PASSED_PREFIXES = List.of("felix.", "org.osgi.", "gosh.", "ds.");

    private final Options options;
    private final Path felixHome;
    private final PrintStream out;
    private final PrintStream err;

    private final Object lifecycle = new Object();
    private Framework framework;
    private Path cacheDir;
    private boolean temporaryCache;
    private boolean shutDown;
    /** Set when shutdown begins; failures after it are the shutdown's doing (SIGTERM), not the user's. */
    private volatile boolean stopping;

    Launcher(Options options, Path felixHome, PrintStream out, PrintStream err) {
        this.options = options;
        this.felixHome = felixHome;
        this.out = out;
        this.err = err;
    }

    /** Runs to the end and returns the exit status; the framework is stopped and a temporary cache deleted. */
    int run() {
        try {
            List<String> statements = loadStatements();
            boot();
            if (options.interactive()) {
                framework.waitForStop(0);
                return 0;
            }
            if (!runStatements(statements)) {
                return 1;
            }
            if (options.daemon()) {
                out.println("kickplug: running (pid " + ProcessHandle.current().pid() + "); stop with SIGTERM");
                framework.waitForStop(0);
            }
            return 0;
        } catch (StartupException e) {
            fail(e.getMessage(), e);
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted", e);
            return 1;
        } catch (Exception e) {
            fail(Errors.message(e), e);
            return 1;
        } finally {
            shutdown();
        }
    }

    /** Stops the framework and deletes a temporary cache; safe to call twice and from a shutdown hook. */
    void shutdown() {
        stopping = true;
        synchronized (lifecycle) {
            if (shutDown) {
                return;
            }
            shutDown = true;
            if (framework != null) {
                try {
                    framework.stop();
                    framework.waitForStop(STOP_TIMEOUT.toMillis());
                } catch (BundleException e) {
                    err.println("warning: the framework did not stop cleanly: " + Errors.message(e));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (temporaryCache && cacheDir != null) {
                deleteTree(cacheDir);
            }
        }
    }

    private List<String> loadStatements() throws StartupException {
        List<String> statements = new ArrayList<>();
        for (Options.Source source : options.sources()) {
            if (source instanceof Options.Source.Command c) {
                statements.addAll(Statements.split(c.text()));
            } else if (source instanceof Options.Source.Script s) {
                try {
                    statements.addAll(Statements.script(Files.readAllLines(s.file(), StandardCharsets.UTF_8)));
                } catch (NoSuchFileException e) {
                    throw new StartupException("no such script: " + s.file(), e);
                } catch (IOException | UncheckedIOException e) {
                    throw new StartupException("cannot read script " + s.file() + ": " + Errors.message(e), e);
                }
            } else if (source instanceof Options.Source.Demo) {
                try (InputStream in = Launcher.class.getResourceAsStream(DEMO)) {
                    if (in == null) {
                        throw new StartupException("the demo script is missing from the launcher jar", null);
                    }
                    String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                    statements.addAll(Statements.script(text.lines().toList()));
                } catch (IOException e) {
                    throw new StartupException("cannot read the demo script: " + Errors.message(e), e);
                }
            }
        }
        return statements;
    }

    private void boot() throws StartupException, InterruptedException {
        BundleSet.Contents contents;
        try {
            contents = BundleSet.scan(BundleSet.bundleDir(felixHome));
        } catch (IOException e) {
            throw new StartupException("cannot read the bundle set: " + Errors.message(e), e);
        }
        for (Path notBundle : contents.notBundles()) {
            err.println("warning: not a bundle, skipped: " + notBundle.getFileName());
        }
        Map<String, String> config = frameworkConfig();
        synchronized (lifecycle) {
            if (shutDown) {
                throw new StartupException("stopped during startup", null);
            }
            try {
                framework = new FrameworkFactory().newFramework(config);
                framework.start();
            } catch (BundleException | RuntimeException e) {
                throw new StartupException("cannot start Felix: " + Errors.message(e), e);
            }
        }
        BundleContext context = framework.getBundleContext();
        List<Bundle> console = new ArrayList<>();
        List<Map.Entry<BundleSet.Jar, Bundle>> installed = new ArrayList<>();
        for (BundleSet.Jar jar : contents.bundles()) {
            try {
                installed.add(Map.entry(jar, context.installBundle(jar.path().toUri().toString())));
            } catch (BundleException e) {
                throw new StartupException("cannot install " + jar.path().getFileName() + ": " + Errors.message(e), e);
            }
        }
        List<CommandComponents.Command> expected = new ArrayList<>();
        for (Map.Entry<BundleSet.Jar, Bundle> entry : installed) {
            BundleSet.Jar jar = entry.getKey();
            if (jar.fragment()) {
                continue;
            }
            if (jar.group() == BundleSet.Group.CONSOLE) {
                console.add(entry.getValue());
                continue;
            }
            start(jar, entry.getValue());
            if (jar.isProject()) {
                try {
                    expected.addAll(CommandComponents.of(jar.path()));
                } catch (IOException e) {
                    throw new StartupException("cannot read the components of " + jar.symbolicName() + ": "
                            + Errors.message(e), e);
                }
            }
        }
        List<String> missing = Readiness.await(context, expected, STARTUP_TIMEOUT);
        if (!missing.isEmpty()) {
            err.println("warning: not ready after " + STARTUP_TIMEOUT.toSeconds() + " s: " + String.join(", ", missing));
        }
        // The console last: it reads input as soon as it is active.
        for (Bundle bundle : console) {
            start(null, bundle);
        }
    }

    private void start(BundleSet.Jar jar, Bundle bundle) throws StartupException {
        try {
            bundle.start();
        } catch (BundleException | RuntimeException e) {
            String name = jar != null ? jar.symbolicName() : bundle.getSymbolicName();
            throw new StartupException("cannot start " + name + ": " + Errors.message(e), e);
        }
    }

    private Map<String, String> frameworkConfig() throws StartupException {
        Map<String, String> config = new HashMap<>();
        for (String key : System.getProperties().stringPropertyNames()) {
            if (PASSED_PREFIXES.stream().anyMatch(key::startsWith)) {
                config.put(key, System.getProperty(key));
            }
        }
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
        config.put(Constants.FRAMEWORK_STORAGE, temporaryCache ? TempFiles.felixStorage(cacheDir) : cacheDir.toString());
        // The launcher installs the bundle set itself on every run, so old cache contents must not linger.
        config.put(Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT);
        if (!options.interactive()) {
            // No console: gosh neither reads stdin nor stops the framework at end of input.
            config.put("gosh.args", "--nointeractive");
        }
        return config;
    }

    /** Runs the statements in one session; false after the first failure (already reported). */
    private boolean runStatements(List<String> statements) throws Exception {
        if (statements.isEmpty()) {
            return true;
        }
        try (GogoSession session = GogoSession.open(framework.getBundleContext(),
                new FileInputStream(FileDescriptor.in), new FileOutputStream(FileDescriptor.out),
                new FileOutputStream(FileDescriptor.err))) {
            for (String statement : PREAMBLE) {
                try {
                    session.execute(statement);
                } catch (Exception e) {
                    // Only conveniences; the statements may still work without them.
                    if (options.verbose()) {
                        err.println("warning: " + statement + ": " + Errors.message(e));
                    }
                }
            }
            for (String statement : statements) {
                try {
                    Object result = session.execute(statement);
                    if (result != null) {
                        out.println(session.format(result));
                    }
                } catch (Exception e) {
                    fail(Errors.message(e), e);
                    return false;
                }
            }
        }
        return true;
    }

    private void fail(String message, Throwable failure) {
        if (stopping) {
            return;
        }
        out.flush();
        err.println("error: " + message);
        if (options.verbose() && failure != null) {
            failure.printStackTrace(err);
        }
        err.flush();
    }

    private void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException | UncheckedIOException e) {
            err.println("warning: could not delete " + root + ": " + Errors.message(e));
        }
    }

    /** A startup failure whose message is already the line to print. */
    static final class StartupException extends Exception {
        private static final long serialVersionUID = 1L;

        StartupException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
