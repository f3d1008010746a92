package io.kickplug.launcher;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.time.Instant;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Logging on stderr, one line per event: {@code 2026-11-30T19:00:00.123Z INFO VhostUserServer: message}.
 * Under systemd (stderr connected to the journal, {@code JOURNAL_STREAM} set) the line starts with the
 * syslog priority ({@code <6>}) instead of the time, which journald takes as the entry's level and stamps
 * itself. Everything the bundles log goes through java.util.logging ({@code System.Logger}'s default).
 */
final class LogLines extends Formatter {

    private final boolean journal;
    private final boolean stackTraces;

    LogLines(boolean journal, boolean stackTraces) {
        this.journal = journal;
        this.stackTraces = stackTraces;
    }

    /**
     * Sets the root level from {@code --log-level} (or the default: {@code warn}, {@code info} with --verbose;
     * a clean run prints nothing on stderr) and replaces the root handlers with one stderr handler using
     * this format. A user's own logging configuration ({@code java.util.logging.config.*}) is left alone.
     */
    static void configure(Options options) {
        if (System.getProperty("java.util.logging.config.file") != null
                || System.getProperty("java.util.logging.config.class") != null) {
            return;
        }
        String name = options.logLevel();
        if (name == null) {
            name = options.verbose() ? "info" : "warn";
        }
        Level level = level(name);
        Logger root = Logger.getLogger("");
        for (Handler h : root.getHandlers()) {
            root.removeHandler(h);
        }
        PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true);
        Handler handler = new Handler() {
            @Override
            public synchronized void publish(LogRecord record) {
                if (isLoggable(record)) {
                    err.print(getFormatter().format(record));
                    err.flush();
                }
            }

            @Override
            public void flush() {
                err.flush();
            }

            @Override
            public void close() {
                err.flush();
            }
        };
        handler.setFormatter(new LogLines(System.getenv("JOURNAL_STREAM") != null, level.intValue() <= Level.FINE.intValue()));
        handler.setLevel(level);
        root.addHandler(handler);
        root.setLevel(level);
    }

    static Level level(String name) {
        return switch (name) {
            case "error" -> Level.SEVERE;
            case "warn" -> Level.WARNING;
            case "info" -> Level.INFO;
            case "debug" -> Level.FINE;
            default -> throw new IllegalArgumentException("unknown log level " + name);
        };
    }

    @Override
    public String format(LogRecord record) {
        StringBuilder sb = new StringBuilder(160);
        int v = record.getLevel().intValue();
        String label = v >= Level.SEVERE.intValue() ? "ERROR" : v >= Level.WARNING.intValue() ? "WARN"
                : v >= Level.INFO.intValue() ? "INFO" : "DEBUG";
        if (journal) {
            // sd-daemon(3) priorities: 3 err, 4 warning, 6 info, 7 debug.
            sb.append(switch (label) {
                case "ERROR" -> "<3>";
                case "WARN" -> "<4>";
                case "INFO" -> "<6>";
                default -> "<7>";
            });
        } else {
            sb.append(Instant.ofEpochMilli(record.getMillis())).append(' ');
        }
        sb.append(label).append(' ').append(source(record.getLoggerName())).append(": ");
        sb.append(oneLine(formatMessage(record)));
        Throwable t = record.getThrown();
        if (t != null) {
            sb.append(": ").append(Errors.message(t));
        }
        sb.append('\n');
        if (t != null && stackTraces) {
            // Debug only: the trace, each line marked as a continuation of the event above.
            java.io.StringWriter w = new java.io.StringWriter();
            t.printStackTrace(new java.io.PrintWriter(w));
            w.toString().lines().forEach(l -> sb.append(journal ? "<7>" : "").append("  | ").append(l).append('\n'));
        }
        return sb.toString();
    }

    /** The logger's last name segment ({@code VhostUserServer}), or the whole name when it has none. */
    private static String source(String logger) {
        if (logger == null || logger.isEmpty()) {
            return "root";
        }
        int dot = logger.lastIndexOf('.');
        return dot < 0 || dot == logger.length() - 1 ? logger : logger.substring(dot + 1);
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.strip().replaceAll("\\s*\\R\\s*", " ");
    }
}
