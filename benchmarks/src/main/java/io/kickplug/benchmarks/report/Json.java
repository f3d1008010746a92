package io.kickplug.benchmarks.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A reader for the project's own result files ({@code docs/results/*.json}): RFC 8259 JSON, no comments, no
 * trailing commas, no duplicate member names. The JDK has no JSON reader and the report code runs from plain
 * {@code javac} output ({@code scripts/figures.sh}), so it carries this one. Every error names the file, the line
 * and column, and what was expected there; every lookup of a missing member names the file and the member's path.
 */
public final class Json {

    /** Deeper nesting is refused (our files nest four levels). */
    static final int MAX_DEPTH = 64;

    private Json() {
    }

    /** A malformed file or a missing or mistyped member; the message names the file and the place. */
    public static final class JsonException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        JsonException(String message) {
            super(message);
        }
    }

    /** {@code text} as a JSON string literal (RFC 8259 section 7): quote, backslash and control characters escaped. */
    public static String quote(String text) {
        if (text == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    /** A JSON number: whole numbers without a fraction, others as {@link Double#toString}; null for NaN and infinities. */
    public static String number(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "null";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return Double.toString(v);
    }

    /** Reads and parses {@code file} (UTF-8); errors name it as given. */
    public static Value read(Path file) throws IOException {
        return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    }

    /**
     * Parses {@code text}, exactly one JSON value with whitespace around it.
     *
     * @param source the name errors give (a file name)
     */
    public static Value parse(String text, String source) {
        Parser p = new Parser(text, source);
        p.space();
        Value v = p.value("$", 0);
        p.space();
        if (p.pos < text.length()) {
            throw p.error("text after the end of the JSON value");
        }
        return v;
    }

    /**
     * One JSON value with where it came from ({@code path}: "$.points[2].backend"): a {@link Map} (object, members
     * in file order), a {@link List}, a {@link String}, a {@link Double}, a {@link Boolean}, or null.
     */
    public static final class Value {
        private final Object v;
        private final String source;
        private final String path;

        Value(Object v, String source, String path) {
            this.v = v;
            this.source = source;
            this.path = path;
        }

        /** Where this value is: "$.provenance.machine". */
        public String path() {
            return path;
        }

        public boolean isNull() {
            return v == null;
        }

        public boolean isObject() {
            return v instanceof Map;
        }

        /** Member {@code name}; an error naming the file and the path when it is missing. */
        public Value get(String name) {
            Value m = object().get(name);
            if (m == null) {
                throw fail("has no member \"" + name + "\"");
            }
            return m;
        }

        /** Member {@code name}, or null when this object has none. */
        public Value opt(String name) {
            return object().get(name);
        }

        /** The member names, in file order. */
        public Set<String> keys() {
            return object().keySet();
        }

        /** The elements of an array. */
        public List<Value> list() {
            if (!(v instanceof List<?> l)) {
                throw fail("is " + kind() + ", not an array");
            }
            List<Value> out = new ArrayList<>(l.size());
            for (Object o : l) {
                out.add((Value) o);
            }
            return out;
        }

        public String string() {
            if (!(v instanceof String s)) {
                throw fail("is " + kind() + ", not a string");
            }
            return s;
        }

        /** A number; NaN for null (the result files write a figure that could not be measured as null). */
        public double number() {
            if (v == null) {
                return Double.NaN;
            }
            if (!(v instanceof Double d)) {
                throw fail("is " + kind() + ", not a number");
            }
            return d;
        }

        /** A whole number. */
        public long integer() {
            double d = number();
            if (d != Math.rint(d) || Double.isNaN(d)) {
                throw fail("is " + d + ", not a whole number");
            }
            return (long) d;
        }

        /** A boolean; null for null (a verdict not taken). */
        public Boolean bool() {
            if (v == null) {
                return null;
            }
            if (!(v instanceof Boolean b)) {
                throw fail("is " + kind() + ", not true or false");
            }
            return b;
        }

        @SuppressWarnings("unchecked")
        private Map<String, Value> object() {
            if (!(v instanceof Map)) {
                throw fail("is " + kind() + ", not an object");
            }
            return (Map<String, Value>) v;
        }

        private String kind() {
            return v == null ? "null" : v instanceof Map ? "an object" : v instanceof List ? "an array"
                    : v instanceof String ? "a string" : v instanceof Double ? "a number" : "a boolean";
        }

        /** An error about this value: "FILE: $.a.b has no member ...". */
        public JsonException fail(String what) {
            return new JsonException(source + ": " + path + " " + what);
        }
    }

    private static final class Parser {
        final String text;
        final String source;
        int pos;

        Parser(String text, String source) {
            this.text = text;
            this.source = source;
        }

        Value value(String path, int depth) {
            if (depth > MAX_DEPTH) {
                throw error("nesting deeper than " + MAX_DEPTH);
            }
            if (pos >= text.length()) {
                throw error("a value expected, found the end of the file");
            }
            char c = text.charAt(pos);
            return switch (c) {
                case '{' -> new Value(object(path, depth), source, path);
                case '[' -> new Value(array(path, depth), source, path);
                case '"' -> new Value(string(), source, path);
                case 't' -> literal("true", Boolean.TRUE, path);
                case 'f' -> literal("false", Boolean.FALSE, path);
                case 'n' -> literal("null", null, path);
                default -> {
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        yield new Value(number(), source, path);
                    }
                    throw error("a value expected, found " + found());
                }
            };
        }

        Map<String, Value> object(String path, int depth) {
            pos++; // '{'
            Map<String, Value> members = new LinkedHashMap<>();
            space();
            if (peek() == '}') {
                pos++;
                return Collections.unmodifiableMap(members);
            }
            while (true) {
                space();
                if (peek() != '"') {
                    throw error("a member name (a string) expected, found " + found());
                }
                int at = pos;
                String name = string();
                if (members.containsKey(name)) {
                    pos = at;
                    throw error("member \"" + name + "\" appears twice in " + path);
                }
                space();
                expect(':', "':' after member name \"" + name + "\"");
                space();
                members.put(name, value(path + "." + name, depth + 1));
                space();
                char c = peek();
                if (c == ',') {
                    pos++;
                } else if (c == '}') {
                    pos++;
                    return Collections.unmodifiableMap(members);
                } else {
                    throw error("',' or '}' expected after member \"" + name + "\", found " + found());
                }
            }
        }

        List<Value> array(String path, int depth) {
            pos++; // '['
            List<Value> items = new ArrayList<>();
            space();
            if (peek() == ']') {
                pos++;
                return Collections.unmodifiableList(items);
            }
            while (true) {
                space();
                items.add(value(path + "[" + items.size() + "]", depth + 1));
                space();
                char c = peek();
                if (c == ',') {
                    pos++;
                } else if (c == ']') {
                    pos++;
                    return Collections.unmodifiableList(items);
                } else {
                    throw error("',' or ']' expected in an array, found " + found());
                }
            }
        }

        String string() {
            pos++; // '"'
            StringBuilder sb = new StringBuilder();
            while (true) {
                if (pos >= text.length()) {
                    throw error("unterminated string");
                }
                char c = text.charAt(pos);
                if (c == '"') {
                    pos++;
                    return sb.toString();
                }
                if (c < 0x20) {
                    throw error("control character U+" + String.format("%04X", (int) c) + " in a string");
                }
                if (c != '\\') {
                    sb.append(c);
                    pos++;
                    continue;
                }
                if (pos + 1 >= text.length()) {
                    throw error("unterminated escape");
                }
                char e = text.charAt(pos + 1);
                switch (e) {
                    case '"', '\\', '/' -> sb.append(e);
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'n' -> sb.append('\n');
                    case 'r' -> sb.append('\r');
                    case 't' -> sb.append('\t');
                    case 'u' -> {
                        if (pos + 6 > text.length()) {
                            throw error("\\u needs four hex digits");
                        }
                        int cp = 0;
                        for (int i = pos + 2; i < pos + 6; i++) {
                            int d = Character.digit(text.charAt(i), 16);
                            if (d < 0) {
                                throw error("\\u needs four hex digits");
                            }
                            cp = cp * 16 + d;
                        }
                        sb.append((char) cp);
                        pos += 4;
                    }
                    default -> throw error("unknown escape \\" + e);
                }
                pos += 2;
            }
        }

        Double number() {
            int start = pos;
            if (peek() == '-') {
                pos++;
            }
            if (peek() == '0') {
                pos++;
            } else if (isDigit(peek())) {
                digits();
            } else {
                throw error("a digit expected in a number, found " + found());
            }
            if (peek() == '.') {
                pos++;
                if (!isDigit(peek())) {
                    throw error("a digit expected after '.', found " + found());
                }
                digits();
            }
            if (peek() == 'e' || peek() == 'E') {
                pos++;
                if (peek() == '+' || peek() == '-') {
                    pos++;
                }
                if (!isDigit(peek())) {
                    throw error("a digit expected in the exponent, found " + found());
                }
                digits();
            }
            return Double.parseDouble(text.substring(start, pos));
        }

        private void digits() {
            while (isDigit(peek())) {
                pos++;
            }
        }

        private static boolean isDigit(char c) {
            return c >= '0' && c <= '9';
        }

        Value literal(String word, Object value, String path) {
            if (!text.startsWith(word, pos)) {
                throw error("a value expected, found " + found());
            }
            pos += word.length();
            return new Value(value, source, path);
        }

        void expect(char c, String what) {
            if (peek() != c) {
                throw error(what + " expected, found " + found());
            }
            pos++;
        }

        void space() {
            while (pos < text.length()) {
                char c = text.charAt(pos);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                    return;
                }
                pos++;
            }
        }

        /** The character at the position, or 0 at the end. */
        char peek() {
            return pos < text.length() ? text.charAt(pos) : 0;
        }

        String found() {
            if (pos >= text.length()) {
                return "the end of the file";
            }
            int end = Math.min(text.length(), pos + 12);
            String s = text.substring(pos, end);
            int nl = s.indexOf('\n');
            return "\"" + (nl >= 0 ? s.substring(0, nl) : s) + "\"";
        }

        /** "FILE:LINE:COLUMN: what" (both from 1), the way compilers name a place. */
        JsonException error(String what) {
            int line = 1;
            int col = 1;
            for (int i = 0; i < Math.min(pos, text.length()); i++) {
                if (text.charAt(i) == '\n') {
                    line++;
                    col = 1;
                } else {
                    col++;
                }
            }
            return new JsonException(source + ":" + line + ":" + col + ": " + what);
        }
    }
}
