package io.kickplug.shell;

/** Parses command option values, with one-line messages that name the option. */
public final class Args {

    private Args() {
    }

    /** A positive int, as an option value ("--queues 4"). */
    public static int positiveInt(String option, String text) {
        return (int) inRange(option, text, 1, Integer.MAX_VALUE, "a positive integer");
    }

    /** An int of 0 or more ("--poll-queues 0"), {@code expected} naming what it counts in the message. */
    public static int nonNegativeInt(String option, String text, String expected) {
        return (int) inRange(option, text, 0, Integer.MAX_VALUE, expected);
    }

    /**
     * A whole number in {@code [min, max]}; otherwise a one-line message "invalid OPTION 'TEXT': expected
     * EXPECTED".
     */
    public static long inRange(String option, String text, long min, long max, String expected) {
        try {
            long value = Long.parseLong(text == null ? "" : text.trim());
            if (value >= min && value <= max) {
                return value;
            }
        } catch (NumberFormatException e) {
            // the message below
        }
        throw new IllegalArgumentException("invalid " + option + " '" + text + "': expected " + expected);
    }

    /** A size that must fit an int (a block size), with the size syntax of {@link Sizes}. */
    public static int intSize(String option, String text) {
        long value;
        try {
            value = Sizes.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + ": " + e.getMessage());
        }
        if (value > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("invalid " + option + " '" + text + "': at most 2 GiB - 1");
        }
        return (int) value;
    }

    /** A size with the syntax of {@link Sizes}, the message naming the option. */
    public static long size(String option, String text) {
        try {
            return Sizes.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + ": " + e.getMessage());
        }
    }
}
