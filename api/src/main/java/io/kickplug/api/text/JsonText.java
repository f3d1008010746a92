package io.kickplug.api.text;

/** JSON string literals (RFC 8259 section 7), the one escape routine of every bundle that prints JSON. */
public final class JsonText {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private JsonText() {
    }

    /** {@code text} as a JSON string literal; {@code null} as the literal {@code null}. */
    public static String quote(String text) {
        if (text == null) {
            return "null";
        }
        return appendQuoted(new StringBuilder(text.length() + 2), text).toString();
    }

    /**
     * Appends {@code text} as a JSON string literal: quote, backslash and the usual control characters get their
     * short escapes, other control characters and U+2028/U+2029 (line breaks to JavaScript) a {@code \}{@code uXXXX}
     * escape, so the literal never spans lines.
     */
    public static StringBuilder appendQuoted(StringBuilder sb, String text) {
        sb.append('"');
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
                        sb.append("\\u").append(HEX[c >> 12 & 0xf]).append(HEX[c >> 8 & 0xf])
                                .append(HEX[c >> 4 & 0xf]).append(HEX[c & 0xf]);
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"');
    }
}
