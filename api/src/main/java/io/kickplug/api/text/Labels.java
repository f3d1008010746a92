package io.kickplug.api.text;

import java.util.Locale;
import java.util.function.Function;

/**
 * Parsing an enumeration from the label commands and configurations use, with one error message for all of them
 * that lists the labels accepted, taken from the enumeration itself.
 */
public final class Labels {

    private Labels() {
    }

    /**
     * The label a constant has unless its enumeration says otherwise: its name in lower case, with '-' for '_'
     * ({@code VHOST_USER} is {@code vhost-user}).
     */
    public static String of(Enum<?> constant) {
        return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * The constant of {@code type} whose label (or constant name) is {@code text}, ignoring case and surrounding
     * white space.
     *
     * @param what what the value is, for the message: "unknown WHAT 'TEXT' (expected a, b or c)"
     * @throws IllegalArgumentException when no constant has that label
     */
    public static <E extends Enum<E>> E parse(Class<E> type, Function<E, String> label, String text, String what) {
        String t = text == null ? "" : text.trim();
        E[] values = type.getEnumConstants();
        for (E e : values) {
            if (label.apply(e).equalsIgnoreCase(t) || e.name().equalsIgnoreCase(t)) {
                return e;
            }
        }
        StringBuilder expected = new StringBuilder();
        for (int i = 0; i < values.length; i++) {
            expected.append(i == 0 ? "" : i == values.length - 1 ? " or " : ", ").append(label.apply(values[i]));
        }
        throw new IllegalArgumentException("unknown " + what + " '" + text + "' (expected " + expected + ")");
    }
}
