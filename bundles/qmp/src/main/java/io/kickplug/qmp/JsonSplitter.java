package io.kickplug.qmp;

import java.util.function.Consumer;

/**
 * Cuts a character stream into JSON texts, as QEMU's json-streamer does for a monitor: a text ends where its
 * outermost brace or bracket closes (newlines inside it do not matter); a scalar at the top level ends at
 * whitespace. What it cuts is parsed later; a stray closing bracket, or a text longer than {@value #MAX_CHARS}
 * characters, is handed on as it is, so the parser reports it and the stream goes on after it.
 */
public final class JsonSplitter {

    /** A text longer than this is cut off (the client is untrusted; no command comes near it). */
    static final int MAX_CHARS = 1 << 20;

    private final Consumer<String> out;
    private final StringBuilder text = new StringBuilder();
    private int depth;
    private boolean inString;
    private boolean escape;
    private boolean scalar;

    public JsonSplitter(Consumer<String> out) {
        this.out = out;
    }

    public void feed(char c) {
        if (depth == 0 && !scalar) {
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                return;
            }
            text.append(c);
            if (c == '{' || c == '[') {
                depth = 1;
            } else if (c == '}' || c == ']') {
                emit();
            } else {
                scalar = true;
                inString = c == '"';
            }
            return;
        }
        if (scalar && !inString && (c == ' ' || c == '\t' || c == '\r' || c == '\n')) {
            emit();
            return;
        }
        text.append(c);
        if (inString) {
            if (escape) {
                escape = false;
            } else if (c == '\\') {
                escape = true;
            } else if (c == '"') {
                inString = false;
            }
        } else if (!scalar) {
            if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
                if (depth == 0) {
                    emit();
                    return;
                }
            }
        }
        if (text.length() > MAX_CHARS) {
            emit();
        }
    }

    private void emit() {
        String s = text.toString();
        text.setLength(0);
        depth = 0;
        inString = false;
        escape = false;
        scalar = false;
        out.accept(s);
    }
}
