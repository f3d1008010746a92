package io.kickplug.launcher;

/**
 * The little JSON the control socket needs: quoting a string, checking that a text is one JSON value, and
 * finding the raw text of a top-level member of an object. The launcher starts before any bundle, so it
 * carries no JSON library; this parser accepts exactly RFC 8259 (no comments, no trailing commas).
 */
public final class Json {

    /** Deeper nesting is refused rather than risking the parser's stack on untrusted input. */
    static final int MAX_DEPTH = 256;

    private Json() {
    }

    /** {@code text} as a JSON string literal. */
    public static String quote(String text) {
        StringBuilder sb = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    /** True when {@code text} is exactly one JSON value (surrounding whitespace allowed). */
    public static boolean isValue(String text) {
        try {
            Parser p = new Parser(text);
            p.skipSpace();
            p.value(0);
            p.skipSpace();
            return p.pos == text.length();
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * The raw text of member {@code name} of the JSON object {@code text}, or {@code null} when the object
     * has no such member.
     *
     * @throws IllegalArgumentException when {@code text} is not one JSON object
     */
    public static String member(String text, String name) {
        Parser p = new Parser(text);
        p.skipSpace();
        p.expect('{');
        p.skipSpace();
        String found = null;
        if (p.peek() == '}') {
            p.pos++;
        } else {
            while (true) {
                p.skipSpace();
                String key = p.string();
                p.skipSpace();
                p.expect(':');
                p.skipSpace();
                int start = p.pos;
                p.value(1);
                if (key.equals(name) && found == null) {
                    found = text.substring(start, p.pos);
                }
                p.skipSpace();
                char c = p.next();
                if (c == '}') {
                    break;
                }
                if (c != ',') {
                    throw p.error("expected ',' or '}'");
                }
            }
        }
        p.skipSpace();
        if (p.pos != text.length()) {
            throw p.error("text after the object");
        }
        return found;
    }

    /** A JSON number as written, kept as text so that writing it back changes nothing. */
    public record Number(String text) {
    }

    /**
     * {@code text} as a tree: objects as ordered {@code Map<String, Object>} (the last of duplicate names wins),
     * arrays as {@code List<Object>}, strings, {@link Number}s, {@link Boolean}s and {@code null}.
     *
     * @throws IllegalArgumentException when {@code text} is not one JSON value
     */
    public static Object parse(String text) {
        Parser p = new Parser(text);
        p.skipSpace();
        Object value = p.tree(0);
        p.skipSpace();
        if (p.pos != text.length()) {
            throw p.error("text after the value");
        }
        return value;
    }

    /** {@code tree} (as {@link #parse} gives it; other leaves as strings) as JSON text. */
    public static String write(Object tree) {
        StringBuilder out = new StringBuilder();
        write(out, tree);
        return out.toString();
    }

    private static void write(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof java.util.Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (java.util.Map.Entry<?, ?> e : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                out.append(quote(String.valueOf(e.getKey()))).append(':');
                write(out, e.getValue());
            }
            out.append('}');
        } else if (value instanceof java.util.List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                write(out, list.get(i));
            }
            out.append(']');
        } else if (value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Number n) {
            out.append(n.text());
        } else {
            out.append(quote(String.valueOf(value)));
        }
    }

    /** The value of a JSON string literal (the raw text of a string member). */
    public static String unquote(String literal) {
        Parser p = new Parser(literal);
        String s = p.string();
        if (p.pos != literal.length()) {
            throw p.error("text after the string");
        }
        return s;
    }

    private static final class Parser {
        final String text;
        int pos;

        Parser(String text) {
            this.text = text;
        }

        IllegalArgumentException error(String what) {
            return new IllegalArgumentException("invalid JSON at " + pos + ": " + what);
        }

        char peek() {
            if (pos >= text.length()) {
                throw error("unexpected end");
            }
            return text.charAt(pos);
        }

        char next() {
            char c = peek();
            pos++;
            return c;
        }

        void expect(char c) {
            if (next() != c) {
                pos--;
                throw error("expected '" + c + "'");
            }
        }

        void skipSpace() {
            while (pos < text.length()) {
                char c = text.charAt(pos);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                    return;
                }
                pos++;
            }
        }

        void value(int depth) {
            if (depth > MAX_DEPTH) {
                throw error("nested deeper than " + MAX_DEPTH);
            }
            char c = peek();
            switch (c) {
                case '{' -> container('{', '}', true, depth);
                case '[' -> container('[', ']', false, depth);
                case '"' -> string();
                case 't' -> literal("true");
                case 'f' -> literal("false");
                case 'n' -> literal("null");
                default -> number();
            }
        }

        /**
         * An object ({@code members}: each value after a string name and ':') or an array, from its opening
         * bracket to its closing one.
         */
        void container(char open, char close, boolean members, int depth) {
            expect(open);
            skipSpace();
            if (peek() == close) {
                pos++;
                return;
            }
            while (true) {
                skipSpace();
                if (members) {
                    string();
                    skipSpace();
                    expect(':');
                    skipSpace();
                }
                value(depth + 1);
                skipSpace();
                char c = next();
                if (c == close) {
                    return;
                }
                if (c != ',') {
                    pos--;
                    throw error("expected ',' or '" + close + "'");
                }
            }
        }

        String string() {
            expect('"');
            StringBuilder sb = new StringBuilder();
            while (true) {
                char c = next();
                if (c == '"') {
                    return sb.toString();
                }
                if (c < 0x20) {
                    pos--;
                    throw error("control character in a string");
                }
                if (c != '\\') {
                    sb.append(c);
                    continue;
                }
                char e = next();
                switch (e) {
                    case '"', '\\', '/' -> sb.append(e);
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'n' -> sb.append('\n');
                    case 'r' -> sb.append('\r');
                    case 't' -> sb.append('\t');
                    case 'u' -> {
                        if (pos + 4 > text.length()) {
                            throw error("short \\u escape");
                        }
                        try {
                            sb.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw error("bad \\u escape");
                        }
                        pos += 4;
                    }
                    default -> {
                        pos--;
                        throw error("bad escape");
                    }
                }
            }
        }

        Object tree(int depth) {
            if (depth > MAX_DEPTH) {
                throw error("nested deeper than " + MAX_DEPTH);
            }
            char c = peek();
            switch (c) {
                case '{' -> {
                    java.util.Map<String, Object> map = new java.util.LinkedHashMap<>();
                    pos++;
                    skipSpace();
                    if (peek() == '}') {
                        pos++;
                        return map;
                    }
                    while (true) {
                        skipSpace();
                        String key = string();
                        skipSpace();
                        expect(':');
                        skipSpace();
                        map.put(key, tree(depth + 1));
                        skipSpace();
                        char n = next();
                        if (n == '}') {
                            return map;
                        }
                        if (n != ',') {
                            pos--;
                            throw error("expected ',' or '}'");
                        }
                    }
                }
                case '[' -> {
                    java.util.List<Object> list = new java.util.ArrayList<>();
                    pos++;
                    skipSpace();
                    if (peek() == ']') {
                        pos++;
                        return list;
                    }
                    while (true) {
                        skipSpace();
                        list.add(tree(depth + 1));
                        skipSpace();
                        char n = next();
                        if (n == ']') {
                            return list;
                        }
                        if (n != ',') {
                            pos--;
                            throw error("expected ',' or ']'");
                        }
                    }
                }
                case '"' -> {
                    return string();
                }
                case 't' -> {
                    literal("true");
                    return Boolean.TRUE;
                }
                case 'f' -> {
                    literal("false");
                    return Boolean.FALSE;
                }
                case 'n' -> {
                    literal("null");
                    return null;
                }
                default -> {
                    int start = pos;
                    number();
                    return new Number(text.substring(start, pos));
                }
            }
        }

        void literal(String word) {
            if (!text.startsWith(word, pos)) {
                throw error("expected " + word);
            }
            pos += word.length();
        }

        void number() {
            int start = pos;
            if (pos < text.length() && text.charAt(pos) == '-') {
                pos++;
            }
            if (pos < text.length() && text.charAt(pos) == '0') {
                pos++;
            } else if (!digits()) {
                pos = start;
                throw error("expected a value");
            }
            if (pos < text.length() && text.charAt(pos) == '.') {
                pos++;
                if (!digits()) {
                    throw error("expected digits after '.'");
                }
            }
            if (pos < text.length() && (text.charAt(pos) == 'e' || text.charAt(pos) == 'E')) {
                pos++;
                if (pos < text.length() && (text.charAt(pos) == '+' || text.charAt(pos) == '-')) {
                    pos++;
                }
                if (!digits()) {
                    throw error("expected exponent digits");
                }
            }
        }

        private boolean digits() {
            int start = pos;
            while (pos < text.length() && text.charAt(pos) >= '0' && text.charAt(pos) <= '9') {
                pos++;
            }
            return pos > start;
        }
    }
}
