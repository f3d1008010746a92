package io.kickplug.shell;

/** Parses command option values, with one-line messages that name the option. */
public final class Args {

    private Args() {
    }

    /** A positive int, as an option value ("--queues 4"). */
    public static int positiveInt(String option, String text) {
        int value;
        try {
            value = Integer.parseInt(text == null ? "" : text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + option + " '" + text + "': expected a positive integer");
        }
        if (value < 1) {
            throw new IllegalArgumentException("invalid " + option + " '" + text + "': expected a positive integer");
        }
        return value;
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
