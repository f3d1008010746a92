package io.kickplug.launcher;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * qemu-storage-daemon's {@code --daemonize}: the process started returns, status 0, once the daemon is ready; on a
 * failure before that it prints the daemon's error and returns its status. A JVM cannot fork, so the launcher starts
 * itself again (same JVM flags and arguments) in a new session ({@code setsid}, no controlling terminal, stdin
 * {@code /dev/null}), marked by {@value #MARK} in its environment, copies the daemon's output until its ready line
 * and leaves. What the daemon prints afterwards goes nowhere (its pipes are closed; the JVM ignores SIGPIPE), as
 * QSD's goes to {@code /dev/null}.
 */
final class Daemonize {

    /** Set in the environment of the detached daemon. */
    static final String MARK = "KICKPLUG_DAEMONIZED";
    /** The start of the line a daemon prints on stdout when it is ready ({@link Launcher}). */
    static final String READY = "kickplug: running (pid ";

    private Daemonize() {
    }

    /** True in the process {@link #start} started (which must not daemonize again). */
    static boolean isDaemon() {
        return System.getenv(MARK) != null;
    }

    /**
     * Starts the detached daemon with {@code args} and waits until it is ready or ends.
     *
     * @return the status the process started should exit with
     */
    static int start(String[] args, PrintStream out, PrintStream err) {
        List<String> command;
        try {
            command = command(args);
        } catch (IllegalStateException e) {
            err.println("error: cannot daemonize: " + e.getMessage());
            return 1;
        }
        ProcessBuilder pb = new ProcessBuilder(command).redirectInput(new File("/dev/null"));
        pb.environment().put(MARK, "1");
        Process daemon;
        try {
            daemon = pb.start();
        } catch (IOException e) {
            err.println("error: cannot daemonize: " + Errors.message(e));
            return 1;
        }
        Thread errors = copy(daemon.getErrorStream(), err);
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(daemon.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                if (line.startsWith(READY)) {
                    return 0;
                }
                out.println(line);
            }
        } catch (IOException e) {
            err.println("error: reading the daemon's output: " + Errors.message(e));
        }
        try {
            int status = daemon.waitFor();
            errors.join(5000);
            return status;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
    }

    private static Thread copy(InputStream in, PrintStream to) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    to.println(line);
                }
            } catch (IOException e) {
                // the daemon is gone
            }
        }, "kickplug-daemonize-stderr");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** This JVM's command line (flags included) with {@code args}, under {@code setsid} when there is one. */
    static List<String> command(String[] args) {
        ProcessHandle.Info info = ProcessHandle.current().info();
        Optional<String> java = info.command();
        Optional<String[]> all = info.arguments();
        if (java.isEmpty() || all.isEmpty()) {
            throw new IllegalStateException("the JVM's command line is unknown");
        }
        String[] jvm = all.get();
        if (jvm.length < args.length
                || !Arrays.equals(Arrays.copyOfRange(jvm, jvm.length - args.length, jvm.length), args)) {
            throw new IllegalStateException("the JVM's command line does not end with the launcher's arguments");
        }
        List<String> command = new ArrayList<>();
        for (String setsid : List.of("/usr/bin/setsid", "/bin/setsid")) {
            if (Files.isExecutable(Path.of(setsid))) {
                command.add(setsid);
                break;
            }
        }
        command.add(java.get());
        command.addAll(Arrays.asList(jvm));
        return command;
    }
}
