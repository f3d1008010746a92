package io.kickplug.guest.fio;

import java.util.Locale;
import java.util.function.ToLongFunction;

/**
 * fio's value syntax for sizes, times, booleans and integers.
 *
 * <p>Sizes follow fio's default {@code kb_base=1024} ("compatibility mode"): the suffixes k, m, g, t and p,
 * case-insensitive and optionally followed by "b" (4k, 4K, 4kb, 4KB), are powers of 2; the IEC spellings
 * kib, mib, gib, tib and pib are powers of 10, exactly as fio documents for that mode. A size without a
 * suffix is bytes. {@code kb_base=1000} is not emulated.
 */
public final class FioValues {

    private static final String UNITS = "kmgtp";

    private FioValues() {
    }

    /** A byte count with fio's suffixes; negative values and garbage are errors naming {@code option}. */
    public static long size(String option, String text) {
        return withSuffix(option, text, "expected a size such as 4096, 4k, 64m or 1g", suffix -> {
            if (suffix.isEmpty() || suffix.equals("b")) {
                return 1;
            }
            int unit = UNITS.indexOf(suffix.charAt(0));
            String rest = suffix.substring(1);
            if (unit < 0 || !(rest.isEmpty() || rest.equals("b") || rest.equals("ib"))) {
                throw bad(option, text, "unknown size suffix '" + suffix + "' (use k, m, g, t or p)");
            }
            long base = rest.equals("ib") ? 1000 : 1024;
            long multiplier = 1;
            for (int i = 0; i <= unit; i++) {
                multiplier *= base;
            }
            return multiplier;
        });
    }

    /**
     * A number with a unit: {@code text}'s leading digits (an error saying {@code expected} when there are none)
     * times what {@code multiplier} makes of the suffix after them, in lower case ("" for none).
     */
    private static long withSuffix(String option, String text, String expected, ToLongFunction<String> multiplier) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        int digits = 0;
        while (digits < t.length() && Character.isDigit(t.charAt(digits))) {
            digits++;
        }
        if (digits == 0) {
            throw bad(option, text, expected);
        }
        long unit = multiplier.applyAsLong(t.substring(digits));
        try {
            return Math.multiplyExact(Long.parseLong(t.substring(0, digits)), unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw bad(option, text, "too large");
        }
    }

    /** Whether {@code text} is a percentage ("50%"), fio's form for size and offset. */
    public static boolean isPercent(String text) {
        return text != null && text.trim().endsWith("%");
    }

    /** A percentage in (0, 100] (for size) or [0, 100) (for offset) as given by "50%". */
    public static int percent(String option, String text, boolean zeroAllowed) {
        String t = text.trim();
        int value = integer(option, t.substring(0, t.length() - 1), zeroAllowed ? 0 : 1, 100);
        if (zeroAllowed && value == 100) {
            throw bad(option, text, "expected a percentage below 100%");
        }
        return value;
    }

    /**
     * A time in nanoseconds. fio's unit for runtime, ramp_time and timeout is seconds; suffixes d, h, m, s,
     * ms and us (case-insensitive) choose another.
     */
    public static long timeNanos(String option, String text) {
        return withSuffix(option, text, "expected a time such as 10, 10s, 500ms or 2m", suffix -> switch (suffix) {
            case "", "s" -> 1_000_000_000L;
            case "ms" -> 1_000_000L;
            case "us" -> 1_000L;
            case "m" -> 60_000_000_000L;
            case "h" -> 3_600_000_000_000L;
            case "d" -> 86_400_000_000_000L;
            default -> throw bad(option, text, "unknown time suffix '" + suffix + "' (use us, ms, s, m, h or d)");
        });
    }

    /** fio's boolean: a bare option means true; otherwise 0/1 (also true/false, yes/no, on/off). */
    public static boolean bool(String option, String text) {
        if (text == null) {
            return true;
        }
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "1", "true", "yes", "on" -> true;
            case "0", "false", "no", "off" -> false;
            default -> throw bad(option, text, "expected 0 or 1");
        };
    }

    /** A decimal integer in [min, max]. */
    public static int integer(String option, String text, int min, int max) {
        long value;
        try {
            value = Long.parseLong(text == null ? "" : text.trim());
        } catch (NumberFormatException e) {
            throw bad(option, text, "expected an integer");
        }
        if (value < min || value > max) {
            throw bad(option, text, "expected an integer from " + min + " to " + max);
        }
        return (int) value;
    }

    /** A decimal or 0x-hexadecimal unsigned 64-bit integer (randseed). */
    public static long unsignedLong(String option, String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        try {
            if (t.startsWith("0x")) {
                return Long.parseUnsignedLong(t.substring(2), 16);
            }
            return Long.parseUnsignedLong(t);
        } catch (NumberFormatException e) {
            throw bad(option, text, "expected an unsigned integer");
        }
    }

    static FioOptionException bad(String option, String text, String why) {
        return new FioOptionException("invalid " + option + "=" + text + ": " + why);
    }
}
