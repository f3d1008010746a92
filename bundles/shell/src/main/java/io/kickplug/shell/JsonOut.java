package io.kickplug.shell;

import io.kickplug.api.text.JsonText;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;

/**
 * Compact one-line JSON of maps, lists, strings, numbers, booleans and null: what every {@code --json} of the
 * {@code kp:} commands prints, and what the daemon's control socket passes on as the answer's
 * {@code result}. One line, so a control-socket answer is one line too.
 */
public final class JsonOut {

    private JsonOut() {
    }

    /** {@code value} as JSON: a {@link Map} is an object (in its iteration order), an {@link Iterable} an array. */
    public static String write(Object value) {
        StringBuilder sb = new StringBuilder(256);
        write(sb, value);
        return sb.toString();
    }

    private static void write(StringBuilder sb, Object value) {
        if (value == null) {
            sb.append("null");
        } else if (value instanceof String s) {
            JsonText.appendQuoted(sb, s);
        } else if (value instanceof Boolean || value instanceof Integer || value instanceof Long
                || value instanceof Short || value instanceof Byte) {
            sb.append(value);
        } else if (value instanceof Number n) {
            double d = n.doubleValue();
            // JSON has no NaN or infinity.
            sb.append(Double.isFinite(d) ? String.format(Locale.ROOT, "%.3f", d) : "null");
        } else if (value instanceof Map<?, ?> map) {
            sb.append('{');
            Iterator<? extends Map.Entry<?, ?>> it = map.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<?, ?> e = it.next();
                JsonText.appendQuoted(sb, String.valueOf(e.getKey()));
                sb.append(':');
                write(sb, e.getValue());
                if (it.hasNext()) {
                    sb.append(',');
                }
            }
            sb.append('}');
        } else if (value instanceof Iterable<?> list) {
            sb.append('[');
            boolean first = true;
            for (Object o : list) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                write(sb, o);
            }
            sb.append(']');
        } else {
            JsonText.appendQuoted(sb, value.toString());
        }
    }
}
