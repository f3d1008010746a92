package io.kickplug.launcher;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The launcher's command line.
 *
 * @param sources what to run, in command-line order; empty means the interactive console (unless daemon)
 * @param daemon keep running without a console until SIGTERM
 * @param cache Felix storage directory, or {@code null} for a fresh temporary one deleted at exit
 * @param verbose print stack traces with errors
 * @param help print the usage text and exit
 * @param control the daemon's control socket, or {@code null}
 * @param connect the control socket of a running daemon to send the statements to (client mode), or {@code null}
 * @param waitSeconds with {@code connect}: how long to keep trying to connect (0: once)
 * @param pidfile where a daemon writes its process id once it is ready, or {@code null}
 * @param logLevel {@code error}, {@code warn}, {@code info} or {@code debug}, or {@code null} for the default
 * @param state a state folder kept for the next start ({@link StateDir}: the disks' and exports' configurations and
 *     a persistent bundle cache), or {@code null}: a daemon's default bundle cache (configurations not kept), a
 *     temporary cache otherwise ({@link #NO_STATE}: a temporary cache for a daemon too)
 * @param daemonize qemu-storage-daemon's {@code --daemonize}: the process started returns once a detached daemon
 *     is ready ({@link Daemonize})
 * @param version print the version and exit
 */
public record Options(List<Source> sources, boolean daemon, Path cache, boolean verbose, boolean help,
        Path control, Path connect, int waitSeconds, Path pidfile, String logLevel, Path state, boolean daemonize,
        boolean version) {

    /** {@code --state none}: no persistent bundle cache, not even a daemon's default one. */
    public static final Path NO_STATE = Path.of("none");

    /** The levels {@code --log-level} accepts. */
    public static final List<String> LOG_LEVELS = List.of("error", "warn", "info", "debug");

    /** Without the options of the service mode (tests and older callers). */
    public Options(List<Source> sources, boolean daemon, Path cache, boolean verbose, boolean help) {
        this(sources, daemon, cache, verbose, help, null, null, 0, null, null, null, false, false);
    }

    public static final String USAGE = String.join(System.lineSeparator(),
            "usage: java -jar kickplug.jar [options]",
            "",
            "  (no options)      interactive Gogo console (type 'help'; 'exit' or end of input stops)",
            "  -c \"CMD; CMD\"     run Gogo statements, then exit (repeatable)",
            "  -f SCRIPT         run a Gogo script file line by line, then exit (repeatable)",
            "  --demo            run the built-in demo: attach a memory disk, run I/O, list, detach",
            "  --daemon          no console; run -c/-f first (if given), then keep running until SIGTERM",
            "  --control PATH    with --daemon: accept statements on a Unix socket (mode 0600), one per line,",
            "                    each answered with one JSON line {\"ok\":true,\"result\":...} or {\"ok\":false,\"error\":...}",
            "  --pidfile PATH    with --daemon: write the process id there once ready (removed at exit)",
            "  --log-level L     error, warn (default), info or debug: one line per event on stderr",
            "  --connect PATH    client: send the -c/-f statements to a running daemon's control socket instead;",
            "                    same output and exit status as running them locally",
            "  --wait S          with --connect: keep trying to connect for up to S seconds (a readiness check)",
            "  --cache DIR       Felix storage directory (default: a fresh temporary directory, deleted at exit)",
            "  --state DIR       state kept for the next start: the disks and exports with their settings, and",
            "                    the bundle cache (faster start; made again whenever the distribution's jars",
            "                    change); a daemon without it has a bundle cache only, in",
            "                    $XDG_STATE_HOME/kickplug/...; 'none' turns that off",
            "  --verbose         print stack traces with errors",
            "  -h, --help        print this text",
            "  -V, --version     print the version",
            "",
            "qemu-storage-daemon's options (each implies --daemon; run in the order given, among -c/-f; each value",
            "is QEMU's KEY=VALUE,... syntax or a JSON object; see docs/service.md):",
            "  --blockdev [driver=]DRIVER,node-name=N,...     a block node (QMP blockdev-add)",
            "  --object [qom-type=]TYPE,id=ID,...            an object: iothread, throttle-group (QMP object-add)",
            "  --export [type=]vhost-user-blk,id=ID,node-name=N,addr.type=unix,addr.path=P[,writable=on]",
            "           [,num-queues=N][,logical-block-size=N]  (addr.type=fd,addr.str=FD: an inherited socket)",
            "  --export [type=]nbd,id=ID,node-name=N[,name=NAME][,writable=on]   (QMP block-export-add)",
            "  --nbd-server addr.type=unix,addr.path=P | addr.type=inet,addr.host=H,addr.port=N",
            "  --chardev socket,id=ID,path=P,server=on,wait=off   a Unix socket for --monitor",
            "  --monitor [chardev=]ID                        a QMP monitor on that socket",
            "  --pidfile PATH                                as above (written once ready)",
            "  --daemonize                                   return once the daemon (detached) is ready",
            "",
            "Each statement's result is printed. The first failing statement prints one line",
            "'error: <cause>' to stderr and the exit status is 1; otherwise it is 0.");

    public Options {
        sources = List.copyOf(sources);
    }

    /** Where statements come from. */
    public sealed interface Source {
        /** Text given with {@code -c}. */
        record Command(String text) implements Source {
        }

        /** A script file given with {@code -f}. */
        record Script(Path file) implements Source {
        }

        /** The built-in demo script. */
        record Demo() implements Source {
        }

        /** A qemu-storage-daemon option with its value ({@link Qsd}), e.g. {@code --blockdev driver=file,...}. */
        record QsdOption(String option, String value) implements Source {
        }
    }

    /** Bad command-line usage; the message is one line for the user. */
    public static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        public UsageException(String message) {
            super(message);
        }
    }

    /** True when nothing is to be run and no daemon is asked for: the Gogo console takes over. */
    public boolean interactive() {
        return sources.isEmpty() && !daemon && connect == null;
    }

    public static Options parse(String... args) throws UsageException {
        List<Source> sources = new ArrayList<>();
        boolean daemon = false;
        boolean verbose = false;
        boolean help = false;
        Path cache = null;
        Path control = null;
        Path connect = null;
        Path pidfile = null;
        Path state = null;
        String logLevel = null;
        int waitSeconds = 0;
        boolean daemonize = false;
        boolean version = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0 && Qsd.VALUED.contains(arg.substring(0, eq))) {
                // getopt_long's --option=value
                sources.add(new Source.QsdOption(arg.substring(0, eq), arg.substring(eq + 1)));
                daemon = true;
                continue;
            }
            if (Qsd.VALUED.contains(arg)) {
                sources.add(new Source.QsdOption(arg, value(args, ++i, arg)));
                daemon = true;
                continue;
            }
            switch (arg) {
                case "-c", "--command" -> sources.add(new Source.Command(value(args, ++i, arg)));
                case "-f", "--file" -> sources.add(new Source.Script(Path.of(value(args, ++i, arg))));
                case "--demo" -> sources.add(new Source.Demo());
                case "--daemon" -> daemon = true;
                case "--cache" -> {
                    if (cache != null) {
                        throw new UsageException("--cache given twice");
                    }
                    cache = Path.of(value(args, ++i, arg));
                }
                case "--control" -> control = once(control, Path.of(value(args, ++i, arg)), arg);
                case "--connect" -> connect = once(connect, Path.of(value(args, ++i, arg)), arg);
                case "--pidfile" -> pidfile = once(pidfile, Path.of(value(args, ++i, arg)), arg);
                case "--state" -> {
                    String v = value(args, ++i, arg);
                    if (v.isEmpty()) {
                        throw new UsageException("--state needs a directory or 'none'");
                    }
                    state = once(state, v.equals("none") ? NO_STATE : Path.of(v), arg);
                }
                case "--log-level" -> {
                    String level = value(args, ++i, arg);
                    if (!LOG_LEVELS.contains(level)) {
                        throw new UsageException("--log-level must be one of " + String.join(", ", LOG_LEVELS));
                    }
                    logLevel = once(logLevel, level, arg);
                }
                case "--wait" -> {
                    String v = value(args, ++i, arg);
                    try {
                        waitSeconds = Integer.parseInt(v);
                    } catch (NumberFormatException e) {
                        waitSeconds = -1;
                    }
                    if (waitSeconds < 0) {
                        throw new UsageException("--wait needs a number of seconds, not '" + v + "'");
                    }
                }
                case "-v", "--verbose" -> verbose = true;
                case "-h", "--help" -> help = true;
                case "-V", "--version" -> version = true;
                case "--daemonize" -> {
                    daemonize = true;
                    daemon = true;
                }
                case "-T", "--trace" -> throw new UsageException(arg + " (QEMU's trace events) is not supported; "
                        + "use --log-level debug");
                default -> throw new UsageException("unknown argument '" + arg + "' (try --help)");
            }
        }
        if ((control != null || pidfile != null) && !daemon) {
            throw new UsageException((control != null ? "--control" : "--pidfile") + " needs --daemon");
        }
        if (connect != null) {
            if (daemon || cache != null || state != null || sources.stream().anyMatch(s -> s instanceof Source.Demo)) {
                throw new UsageException("--connect takes only -c, -f, --wait and --verbose");
            }
        } else if (waitSeconds > 0) {
            throw new UsageException("--wait needs --connect");
        }
        if (cache != null && state != null && state != NO_STATE) {
            throw new UsageException("--cache and --state exclude each other");
        }
        return new Options(sources, daemon, cache, verbose, help, control, connect, waitSeconds, pidfile, logLevel,
                state, daemonize, version);
    }

    /**
     * The exit status of a command line that cannot be parsed: 1 for a daemon's (as qemu-storage-daemon's), 2
     * otherwise.
     */
    public static int usageStatus(String... args) {
        for (String a : args) {
            if (a.equals("--daemon") || Qsd.isQsdOption(a)) {
                return 1;
            }
        }
        return 2;
    }

    private static <T> T once(T current, T value, String option) throws UsageException {
        if (current != null) {
            throw new UsageException(option + " given twice");
        }
        return value;
    }

    private static String value(String[] args, int index, String option) throws UsageException {
        if (index >= args.length) {
            throw new UsageException(option + " needs a value (try --help)");
        }
        return args[index];
    }
}
