package io.kickplug.launcher;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Splits Gogo text into statements so that each statement's result can be printed and the first failure
 * can stop the run.
 *
 * <p>Statements end at a top-level {@code ;} or newline. "Top level" means outside quotes ({@code '...'},
 * {@code "..."}), outside a backslash escape, and outside braces, brackets and parentheses, so closures
 * such as {@code each (lb) { echo $it; echo }} stay one statement.
 */
public final class Statements {

    private Statements() {
    }

    /** The statements of one {@code -c} argument (or one logical script line), trimmed, empty ones dropped. */
    public static List<String> split(String text) {
        List<String> out = new ArrayList<>();
        Scan scan = new Scan();
        StringBuilder current = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (scan.atTopLevel() && (c == ';' || c == '\n')) {
                add(out, current);
                current.setLength(0);
            } else {
                current.append(c);
            }
            scan.accept(c);
        }
        add(out, current);
        return out;
    }

    /**
     * The statements of a script: blank lines and lines starting with {@code #} are skipped, a line ending in
     * {@code \} continues on the next line, and a line that leaves a quote, brace, bracket or parenthesis open
     * continues too (so a closure may span lines).
     */
    public static List<String> script(List<String> lines) {
        List<String> out = new ArrayList<>();
        StringBuilder pending = new StringBuilder();
        for (String line : lines) {
            String stripped = line.strip();
            boolean inQuote = pending.length() > 0 && scan(pending).inQuote();
            if (!inQuote && (stripped.isEmpty() || stripped.startsWith("#"))) {
                continue;
            }
            String body = line.stripTrailing();
            if (endsWithContinuation(body)) {
                pending.append(body, 0, body.length() - 1);
                continue;
            }
            pending.append(line);
            if (scan(pending).atTopLevel()) {
                out.addAll(split(pending.toString()));
                pending.setLength(0);
            } else {
                pending.append('\n');
            }
        }
        if (pending.length() > 0) {
            // Unbalanced at end of file: hand it to Gogo, which reports the syntax error.
            out.addAll(split(pending.toString()));
        }
        return out;
    }

    /** A trailing backslash that is not itself escaped. */
    private static boolean endsWithContinuation(String body) {
        int backslashes = 0;
        for (int i = body.length() - 1; i >= 0 && body.charAt(i) == '\\'; i--) {
            backslashes++;
        }
        return backslashes % 2 == 1;
    }

    private static Scan scan(CharSequence text) {
        Scan scan = new Scan();
        for (int i = 0; i < text.length(); i++) {
            scan.accept(text.charAt(i));
        }
        return scan;
    }

    private static void add(List<String> out, StringBuilder statement) {
        String s = statement.toString().strip();
        if (!s.isEmpty()) {
            out.add(s);
        }
    }

    /** Tracks quoting, escapes and nesting one character at a time. */
    private static final class Scan {
        private final Deque<Character> closers = new ArrayDeque<>();
        private char quote;
        private boolean escaped;

        boolean atTopLevel() {
            return quote == 0 && !escaped && closers.isEmpty();
        }

        boolean inQuote() {
            return quote != 0;
        }

        void accept(char c) {
            if (escaped) {
                escaped = false;
                return;
            }
            // In single quotes a backslash is an ordinary character; in double quotes, as outside, it escapes.
            if (quote == '\'' || (quote == '"' && c != '\\')) {
                if (c == quote) {
                    quote = 0;
                }
                return;
            }
            if (c == '\\') {
                escaped = true;
                return;
            }
            switch (c) {
                case '\'', '"' -> quote = c;
                case '{' -> closers.push('}');
                case '[' -> closers.push(']');
                case '(' -> closers.push(')');
                case '}', ']', ')' -> {
                    // A stray closer is left for Gogo to report; only a matching one closes a level.
                    if (!closers.isEmpty() && closers.peek() == c) {
                        closers.pop();
                    }
                }
                default -> {
                }
            }
        }
    }
}
