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
 */
public record Options(List<Source> sources, boolean daemon, Path cache, boolean verbose, boolean help) {

    public static final String USAGE = String.join(System.lineSeparator(),
            "usage: java -jar kickplug.jar [options]",
            "",
            "  (no options)      interactive Gogo console (type 'help'; 'exit' or end of input stops)",
            "  -c \"CMD; CMD\"     run Gogo statements, then exit (repeatable)",
            "  -f SCRIPT         run a Gogo script file line by line, then exit (repeatable)",
            "  --demo            run the built-in demo: attach a memory disk, run I/O, list, detach",
            "  --daemon          no console; run -c/-f first (if given), then keep running until SIGTERM",
            "  --cache DIR       Felix storage directory (default: a fresh temporary directory, deleted at exit)",
            "  --verbose         print stack traces with errors",
            "  --help            print this text",
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
        return sources.isEmpty() && !daemon;
    }

    public static Options parse(String... args) throws UsageException {
        List<Source> sources = new ArrayList<>();
        boolean daemon = false;
        boolean verbose = false;
        boolean help = false;
        Path cache = null;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
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
                case "-v", "--verbose" -> verbose = true;
                case "-h", "--help" -> help = true;
                default -> throw new UsageException("unknown argument '" + arg + "' (try --help)");
            }
        }
        return new Options(sources, daemon, cache, verbose, help);
    }

    private static String value(String[] args, int index, String option) throws UsageException {
        if (index >= args.length) {
            throw new UsageException(option + " needs a value (try --help)");
        }
        return args[index];
    }
}
