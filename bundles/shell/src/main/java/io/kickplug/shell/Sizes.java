package io.kickplug.shell;

import io.kickplug.api.blk.DiskSpec;
import java.util.Locale;

/** Byte sizes as a shell user writes them ("64M", "512K", "1G", "2T", "4096") and reads them ("64 MiB"). */
public final class Sizes {
    private Sizes() {
    }

    /**
     * Parses a byte count with an optional binary suffix K, M, G or T (case-insensitive).
     *
     * @throws IllegalArgumentException with a one-line message for anything else
     */
    public static long parse(String text) {
        return DiskSpec.parseSize(text);
    }

    /** "0 B", "512 B", "4 KiB", "64 MiB", "1.5 GiB": the largest unit that leaves at least 1, one decimal. */
    public static String format(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] names = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        int unit = 0;
        double value = bytes / 1024.0;
        while (value >= 1024 && unit < names.length - 1) {
            value /= 1024;
            unit++;
        }
        long whole = Math.round(value);
        if (Math.abs(value - whole) < 0.05) {
            return whole + " " + names[unit];
        }
        return String.format(Locale.ROOT, "%.1f %s", value, names[unit]);
    }
}
