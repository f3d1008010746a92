package io.kickplug.launcher;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;

/**
 * {@code java -jar kickplug.jar}: Felix with the Kickplug bundle set. The bundles live in {@code felix/bundle}
 * next to the jar, whatever the working directory (system property {@code kickplug.felix.dir} overrides).
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        // Our own streams on the process's descriptors: Gogo replaces System.out/err with per-thread proxies.
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true);
        PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true);
        Options options;
        try {
            options = Options.parse(args);
        } catch (Options.UsageException e) {
            exit(err, e.getMessage(), Options.usageStatus(args));
            return;
        }
        if (options.help()) {
            out.println(Options.USAGE);
            System.exit(0);
            return;
        }
        if (options.version()) {
            out.println("kickplug version " + version());
            System.exit(0);
            return;
        }
        if (options.daemonize() && !Daemonize.isDaemon()) {
            System.exit(Daemonize.start(args, out, err));
            return;
        }
        LogLines.configure(options);
        if (options.connect() != null) {
            // Client mode: no Felix at all, so a readiness check or a one-off command starts fast.
            java.util.List<String> statements;
            try {
                statements = StatementSources.load(options);
            } catch (Launcher.StartupException e) {
                exit(err, e.getMessage(), 1);
                return;
            }
            System.exit(ControlClient.run(options.connect(), options.waitSeconds(), statements, out, err));
            return;
        }
        Path home;
        try {
            home = felixHome();
        } catch (IllegalStateException e) {
            exit(err, e.getMessage(), 1);
            return;
        }
        Launcher launcher = new Launcher(options, home, out, err);
        ExitState state = new ExitState();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (state.exiting) {
                return;
            }
            // SIGTERM or Ctrl-C: stop the framework cleanly and delete a temporary cache.
            launcher.shutdown();
            if (options.daemon()) {
                // Stopping a daemon by SIGTERM is its normal end, so the status is 0 rather than 143.
                out.println("kickplug: stopped");
                Runtime.getRuntime().halt(0);
            }
        }, "kickplug-shutdown"));
        int status = launcher.run();
        state.exiting = true;
        System.exit(status);
    }

    /** The distribution's version (the launcher jar's Implementation-Version), or "unknown". */
    static String version() {
        String v = Main.class.getPackage().getImplementationVersion();
        return v != null ? v : "unknown";
    }

    /** Ends a start that cannot go on: one line "error: MESSAGE" on stderr and exit status {@code status}. */
    private static void exit(PrintStream err, String message, int status) {
        err.println("error: " + message);
        System.exit(status);
    }

    /** The {@code felix} directory next to the launcher jar (or next to the classes directory). */
    static Path felixHome() {
        String override = System.getProperty("kickplug.felix.dir");
        Path home;
        if (override != null) {
            home = Path.of(override).toAbsolutePath();
        } else {
            CodeSource source = Main.class.getProtectionDomain().getCodeSource();
            if (source == null || source.getLocation() == null) {
                throw new IllegalStateException("cannot tell where kickplug.jar is; set -Dkickplug.felix.dir");
            }
            try {
                Path self = Path.of(source.getLocation().toURI()).toAbsolutePath();
                home = self.getParent().resolve("felix");
            } catch (URISyntaxException | IllegalArgumentException e) {
                throw new IllegalStateException("cannot tell where kickplug.jar is; set -Dkickplug.felix.dir");
            }
        }
        if (!Files.isDirectory(home)) {
            throw new IllegalStateException("no Felix directory at " + home + " (it belongs next to kickplug.jar)");
        }
        return home;
    }

    private static final class ExitState {
        volatile boolean exiting;
    }
}
