package io.kickplug.launcher;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.felix.framework.FrameworkFactory;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
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
    /** How long a stop waits for gogo.shell's start job (see {@link ShellStart}) before it stops anyway. */
    private static final Duration SHELL_START_TIMEOUT = Duration.ofSeconds(10);
    private static final String GOGO_SHELL = "org.apache.felix.gogo.shell";
    /**
     * A daemon that stops as soon as it is ready and its later bundles have started: the class-data archive's
     * training run at package time (distribution/pom.xml), so that the archive holds what a daemon loads on the
     * way to ready (its control socket included), not only what a {@code -c} run loads.
     */
    static final String EXIT_WHEN_READY = "kickplug.daemon.exitWhenReady";
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

    private final Options options;
    private final Path felixHome;
    private final PrintStream out;
    private final PrintStream err;

    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger("kickplug.launcher");

    private final Object lifecycle = new Object();
    private final long startNanos = System.nanoTime();
    private Framework framework;
    /** Watches gogo.shell's start job when there is no console; {@code null} before boot or interactive. */
    private ShellStart shellStart;
    private ControlServer control;
    private final List<Map.Entry<BundleSet.Jar, Bundle>> later = new ArrayList<>();
    /**
     * A daemon's console bundles ({@link LazyStart#ON_DEMAND}) that no statement needed yet: started when a
     * control-socket statement uses one of their functions ({@link #startOnDemand}); guarded by itself.
     */
    private final List<Bundle> onDemand = new ArrayList<>();
    /** The qemu-storage-daemon option each statement made from one comes from (see {@link Qsd}). */
    private final Map<String, String> labels = new HashMap<>();
    /** Opened when {@link #startLater} is done (at once when nothing waits): control-socket sessions wait for it. */
    private final java.util.concurrent.CountDownLatch laterStarted = new java.util.concurrent.CountDownLatch(1);
    private Path pidfile;
    /** The bundle cache and configurations: a state folder, {@code --cache DIR} or a temporary cache. */
    private final FrameworkStorage storage;
    private boolean shutDown;
    /** Set when shutdown begins; failures after it are the shutdown's doing (SIGTERM), not the user's. */
    private volatile boolean stopping;

    Launcher(Options options, Path felixHome, PrintStream out, PrintStream err) {
        this.options = options;
        this.felixHome = felixHome;
        this.out = out;
        this.err = err;
        this.storage = new FrameworkStorage(options, felixHome, err);
    }

    /** Runs to the end and returns the exit status; the framework is stopped and a temporary cache deleted. */
    int run() {
        try {
            List<String> statements = StatementSources.load(options, labels);
            boot(statements);
            if (options.interactive()) {
                framework.waitForStop(0);
                return 0;
            }
            if (!runStatements(statements)) {
                return 1;
            }
            phase(statements.size() + " statements run");
            if (options.daemon()) {
                serve();
                startLater();
                if (Boolean.getBoolean(EXIT_WHEN_READY)) {
                    return 0;
                }
                out.println("kickplug: running (pid " + ProcessHandle.current().pid() + "); stop with SIGTERM");
                ControlServer c = control;
                if (c != null) {
                    // This thread accepts the control socket's clients (a thread less than an acceptor of its
                    // own) until the socket closes: at shutdown (SIGTERM) or when the framework stops.
                    c.acceptUntilClosed();
                }
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
            if (control != null) {
                control.close();
            }
            if (pidfile != null) {
                Pidfile.remove(pidfile);
            }
            if (framework != null) {
                awaitShellStart();
                try {
                    framework.stop();
                    framework.waitForStop(STOP_TIMEOUT.toMillis());
                } catch (BundleException e) {
                    err.println("warning: the framework did not stop cleanly: " + Errors.message(e));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            storage.close();
        }
    }

    /**
     * A daemon's service side, once its -c/-f statements have run: the control socket, then the pid file
     * (whose appearance, like the socket's, means ready), then one log line with the start-to-ready time.
     */
    private void serve() throws StartupException {
        synchronized (lifecycle) {
            if (shutDown) {
                throw new StartupException("stopped during startup", null);
            }
            if (options.control() != null) {
                try {
                    ControlServer c = ControlServer.bind(options.control(),
                            new GogoStatements(framework.getBundleContext(), PREAMBLE, laterStarted,
                                    this::startOnDemand),
                            ControlServer.DEFAULT_MAX_CLIENTS);
                    control = c;
                    // A framework that stops by itself (a statement's "stop 0") closes the socket, which ends the
                    // main thread's accepting (run): it then sees the framework stopped.
                    framework.getBundleContext().addBundleListener((org.osgi.framework.SynchronousBundleListener) e -> {
                        if (e.getBundle().getBundleId() == 0 && e.getType() == org.osgi.framework.BundleEvent.STOPPING) {
                            c.close();
                        }
                    });
                } catch (IOException e) {
                    throw new StartupException("cannot open the control socket " + options.control() + ": "
                            + Errors.message(e), e);
                }
            }
            if (options.pidfile() != null) {
                try {
                    Pidfile.write(options.pidfile());
                    pidfile = options.pidfile();
                } catch (IOException e) {
                    throw new StartupException("cannot write the pid file " + options.pidfile() + ": "
                            + Errors.message(e), e);
                }
            }
        }
        long millis = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        LOG.info(() -> "ready in " + millis + " ms after the launcher started (pid " + ProcessHandle.current().pid()
                + (options.control() != null ? ", control socket " + options.control() : "") + ")");
    }

    /** Lets gogo.shell's start job end before the framework stops (see {@link ShellStart}). */
    private void awaitShellStart() {
        if (shellStart == null) {
            return;
        }
        try {
            if (!shellStart.await(SHELL_START_TIMEOUT)) {
                LOG.fine(() -> "gogo.shell's start job did not end within " + SHELL_START_TIMEOUT.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            shellStart.close();
        }
    }

    /** A debug line per start-up phase with the time since the launcher started (what to look at when it is slow). */
    private void phase(String what) {
        if (LOG.isLoggable(java.util.logging.Level.FINE)) {
            long millis = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
            LOG.fine("start-up: " + what + " at " + millis + " ms");
        }
    }

    private void boot(List<String> statements) throws StartupException, InterruptedException {
        boolean lazy = options.daemon() && !Boolean.getBoolean("kickplug.daemon.eager");
        java.util.Set<String> words = LazyStart.words(statements);
        Path bundleDir = BundleSet.bundleDir(felixHome);
        List<Path> jars;
        try {
            jars = BundleFacts.list(bundleDir);
        } catch (IOException e) {
            throw new StartupException("cannot read the bundle set: " + Errors.message(e), e);
        }
        Map<String, String> config = storage.frameworkConfig(jars);
        StateDir state = storage.state();
        phase("state opened");
        // From a reusable cache, what the jars say comes from the facts kept with it; otherwise from the jars.
        BundleFacts.Facts facts = state != null && state.reusable()
                ? BundleFacts.read(state.facts(), bundleDir, jars) : null;
        String newFacts = null;
        if (facts == null) {
            facts = readJars(bundleDir);
            if (state != null) {
                try {
                    newFacts = BundleFacts.format(facts.contents(), facts.descriptions());
                } catch (IOException e) {
                    LOG.fine(() -> "the bundle facts are not kept: " + Errors.message(e));
                }
            }
        }
        phase("bundle set read" + (newFacts == null && state != null ? " (from the cache)" : ""));
        BundleSet.Contents contents = facts.contents();
        for (Path notBundle : contents.notBundles()) {
            err.println("warning: not a bundle, skipped: " + notBundle.getFileName());
        }
        synchronized (lifecycle) {
            if (shutDown) {
                throw new StartupException("stopped during startup", null);
            }
            try {
                framework = new FrameworkFactory().newFramework(config);
                phase("framework created");
                framework.init();
                phase("framework initialised");
                if (state != null) {
                    // A cached bundle that was started persistently (by hand, with Gogo's start) would be started
                    // by the framework's start below, ahead of the launcher's order and lazy start.
                    for (Bundle b : framework.getBundleContext().getBundles()) {
                        if (b.getBundleId() != 0
                                && b.adapt(org.osgi.framework.startlevel.BundleStartLevel.class).isPersistentlyStarted()) {
                            b.stop(); // not active yet: only its autostart setting changes
                        }
                    }
                }
                framework.start();
            } catch (BundleException | RuntimeException e) {
                if (state != null) {
                    state.forget(); // whatever is wrong with the cache, the next start makes it again
                }
                throw new StartupException("cannot start Felix: " + Errors.message(e), e);
            }
        }
        phase("framework started" + (state == null ? "" : state.reusable() ? " (bundle cache reused)"
                : " (bundle cache made)"));
        BundleContext context = framework.getBundleContext();
        List<Bundle> console = new ArrayList<>();
        List<Map.Entry<BundleSet.Jar, Bundle>> installed = new ArrayList<>();
        java.util.Set<String> locations = new java.util.HashSet<>();
        for (BundleSet.Jar jar : contents.bundles()) {
            try {
                // "reference:": Felix uses the jar where it is instead of copying it into the cache first. A
                // location that is in the reused cache already gives the cached bundle.
                String location = "reference:" + jar.path().toUri();
                locations.add(location);
                installed.add(Map.entry(jar, context.installBundle(location)));
            } catch (BundleException e) {
                if (state != null) {
                    state.forget();
                }
                throw new StartupException("cannot install " + jar.path().getFileName() + ": " + Errors.message(e), e);
            }
        }
        if (state != null) {
            try {
                for (Bundle b : context.getBundles()) {
                    // A kept plugin (--state DIR) stays: Plugins.startKept below starts it, or removes it when its
                    // jar is gone. In a daemon's default folder, a cache, plugins last one run, as its disks do.
                    boolean keptPlugin = state.keepsConfig() && b.getLocation().startsWith(Plugins.LOCATION_PREFIX);
                    if (b.getBundleId() != 0 && !locations.contains(b.getLocation()) && !keptPlugin) {
                        b.uninstall(); // installed by hand into the cache: not part of the distribution
                    }
                }
                state.installed(newFacts);
            } catch (BundleException | IOException e) {
                state.forget();
                throw new StartupException("cannot update the bundle cache in " + state.dir() + ": "
                        + Errors.message(e), e);
            }
        }
        phase(installed.size() + " bundles installed");
        java.util.Set<String> waiting = lazy ? LazyStart.waiting(byName(facts), words) : java.util.Set.of();
        if (lazy) {
            phase("waiting for ready: " + new java.util.TreeSet<>(waiting));
        }
        List<CommandComponents.Command> expected = new ArrayList<>();
        List<Map.Entry<BundleSet.Jar, Bundle>> now = new ArrayList<>();
        List<Bundle> resolve = new ArrayList<>();
        for (Map.Entry<BundleSet.Jar, Bundle> entry : installed) {
            BundleSet.Jar jar = entry.getKey();
            if (jar.fragment()) {
                resolve.add(entry.getValue());
                continue;
            }
            if (jar.group() == BundleSet.Group.CONSOLE) {
                console.add(entry.getValue());
                continue;
            }
            List<CommandComponents.Command> commands = facts.descriptions()
                    .getOrDefault(jar.path(), CommandComponents.Descriptions.NONE).commands();
            if (waiting.contains(jar.symbolicName())) {
                if (LazyStart.ON_DEMAND.contains(jar.symbolicName())) {
                    onDemand.add(entry.getValue());
                } else {
                    later.add(Map.entry(jar, entry.getValue()));
                }
                continue;
            }
            now.add(entry);
            resolve.add(entry.getValue());
            expected.addAll(commands);
        }
        // One resolver run for every bundle that starts now, rather than one per bundle start. A bundle it cannot
        // resolve fails its start below with the resolver's message, as before.
        framework.adapt(org.osgi.framework.wiring.FrameworkWiring.class).resolveBundles(resolve);
        phase("bundles resolved");
        for (Map.Entry<BundleSet.Jar, Bundle> entry : now) {
            start(entry.getKey(), entry.getValue());
            phase("started " + entry.getKey().symbolicName());
        }
        phase("bundles started");
        if (state != null && state.keepsConfig()) {
            Plugins.startKept(context, state.plugins(), err);
            phase("plugins started");
        }
        List<String> missing = Readiness.await(context, expected, STARTUP_TIMEOUT);
        phase("commands ready");
        if (!missing.isEmpty()) {
            err.println("warning: not ready after " + STARTUP_TIMEOUT.toSeconds() + " s: " + String.join(", ", missing));
        }
        if (!options.interactive()) {
            shellStart = ShellStart.watch(context);
        }
        // The console last: it reads input as soon as it is active.
        for (Bundle bundle : console) {
            if (waiting.contains(bundle.getSymbolicName())) {
                if (LazyStart.ON_DEMAND.contains(bundle.getSymbolicName())) {
                    onDemand.add(bundle);
                } else {
                    later.add(Map.entry(new BundleSet.Jar(null, bundle.getSymbolicName(), "", false), bundle));
                }
            } else {
                synchronized (lifecycle) {
                    if (shutDown) {
                        throw new StartupException("stopped during startup", null);
                    }
                    watchShell(bundle);
                }
                start(null, bundle);
            }
        }
    }

    /** What the component descriptions say, by symbolic name (of the bundles that are not fragments). */
    private static Map<String, CommandComponents.Descriptions> byName(BundleFacts.Facts facts) {
        Map<String, CommandComponents.Descriptions> out = new HashMap<>();
        for (BundleSet.Jar jar : facts.contents().bundles()) {
            CommandComponents.Descriptions d = facts.descriptions().get(jar.path());
            if (d != null && !jar.fragment()) {
                out.merge(jar.symbolicName(), d, CommandComponents.Descriptions::and);
            }
        }
        return out;
    }

    /** Reads the manifests of the bundle jars and the component descriptions of the project bundles. */
    private BundleFacts.Facts readJars(Path bundleDir) throws StartupException {
        BundleSet.Contents contents;
        try {
            contents = BundleSet.scan(bundleDir);
        } catch (IOException e) {
            throw new StartupException("cannot read the bundle set: " + Errors.message(e), e);
        }
        Map<Path, CommandComponents.Descriptions> descriptions = new HashMap<>();
        CommandIndex index = CommandIndex.load(felixHome);
        for (BundleSet.Jar jar : contents.bundles()) {
            if (jar.isProject() && !jar.fragment()) {
                try {
                    descriptions.put(jar.path(), index.of(jar.path()));
                } catch (IOException e) {
                    throw new StartupException("cannot read the components of " + jar.symbolicName() + ": "
                            + Errors.message(e), e);
                }
            }
        }
        return new BundleFacts.Facts(contents, descriptions);
    }

    /** A daemon's bundles that wait until it is ready (see {@link LazyStart}); a failure there is only logged. */
    private void startLater() {
        try {
            startLaterBundles();
        } finally {
            laterStarted.countDown();
        }
        if (storage.sweepLater()) {
            // Housekeeping a daemon does after it is ready: folders and files left by killed processes.
            for (String warning : TempFiles.sweep(Path.of(System.getProperty("java.io.tmpdir")), Path.of("/dev/shm"))) {
                err.println("warning: " + warning);
            }
        }
    }

    private void startLaterBundles() {
        for (Map.Entry<BundleSet.Jar, Bundle> e : later) {
            // Under the lock, so that a stop that begins now either sees the shell as starting and waits for its
            // job, or is seen here and nothing more starts.
            synchronized (lifecycle) {
                if (stopping) {
                    return;
                }
                watchShell(e.getValue());
            }
            try {
                e.getValue().start(Bundle.START_TRANSIENT);
            } catch (BundleException | RuntimeException | Error ex) {
                LOG.warning(() -> "cannot start " + e.getKey().symbolicName() + ": " + Errors.message(ex));
            }
        }
        if (!later.isEmpty()) {
            phase(later.size() + " bundles started after ready");
        }
    }

    /**
     * Starts, before a control-socket statement runs, the console bundles it needs that have not started yet
     * (gogo.command before gogo.shell, as at boot). A failure is only logged: the statement then fails as a
     * statement does whose command is missing.
     */
    private void startOnDemand(String statement) {
        List<Bundle> due = new ArrayList<>();
        synchronized (onDemand) {
            if (onDemand.isEmpty()) {
                return;
            }
            java.util.Set<String> needed = LazyStart.neededNow(statement);
            if (needed.isEmpty()) {
                return;
            }
            for (java.util.Iterator<Bundle> it = onDemand.iterator(); it.hasNext();) {
                Bundle b = it.next();
                if (needed.contains(b.getSymbolicName())) {
                    due.add(b);
                    it.remove();
                }
            }
            for (Bundle b : due) {
                // Under the lifecycle lock, as in startLaterBundles: a stop that begins now either waits for
                // gogo.shell's job or is seen here.
                synchronized (lifecycle) {
                    if (stopping) {
                        return;
                    }
                    watchShell(b);
                }
                try {
                    b.start(Bundle.START_TRANSIENT);
                    phase("started on demand: " + b.getSymbolicName());
                } catch (BundleException | RuntimeException | Error ex) {
                    LOG.warning(() -> "cannot start " + b.getSymbolicName() + ": " + Errors.message(ex));
                }
            }
        }
    }

    private void watchShell(Bundle bundle) {
        if (shellStart != null && GOGO_SHELL.equals(bundle.getSymbolicName())) {
            shellStart.starting(bundle);
        }
    }

    private void start(BundleSet.Jar jar, Bundle bundle) throws StartupException {
        try {
            // Transient: a reused bundle cache (--state) must not start bundles by itself at the next start.
            bundle.start(Bundle.START_TRANSIENT);
        } catch (BundleException | RuntimeException e) {
            String name = jar != null ? jar.symbolicName() : bundle.getSymbolicName();
            throw new StartupException("cannot start " + name + ": " + Errors.message(e), e);
        }
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
            phase("session opened");
            for (String statement : statements) {
                try {
                    Object result = session.execute(statement);
                    phase("ran: " + statement);
                    // A qemu-storage-daemon option prints nothing on success, as in QSD.
                    if (result != null && !labels.containsKey(statement)) {
                        out.println(session.format(result));
                    }
                } catch (Exception e) {
                    String label = labels.get(statement);
                    fail(label == null ? Errors.message(e) : label + ": " + Errors.message(e), e);
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

    /** A startup failure whose message is already the line to print. */
    static final class StartupException extends Exception {
        private static final long serialVersionUID = 1L;

        StartupException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
