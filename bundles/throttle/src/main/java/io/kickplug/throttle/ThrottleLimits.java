package io.kickplug.throttle;

import io.kickplug.api.command.OptionTable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The limits of a throttle group, QEMU's six buckets ({@code docs/throttle.txt}): bps-total, bps-read, bps-write,
 * iops-total, iops-read, iops-write, each with an average rate ({@code avg}, units per second), a burst rate
 * ({@code max}) and how long a burst at {@code max} may last ({@code length}, seconds, default 1). 0 means no limit.
 *
 * <p>QEMU's rules are checked ({@code throttle_is_valid}): a total limit and a read or write limit of the same kind
 * cannot both be set; {@code max} needs {@code avg} and is at least {@code avg}; a length above 1 needs {@code max}.
 */
public record ThrottleLimits(long[] avg, long[] max, long[] length) {

    /** Bucket indices, in QEMU's order. */
    public static final int BPS_TOTAL = 0;
    public static final int BPS_READ = 1;
    public static final int BPS_WRITE = 2;
    public static final int OPS_TOTAL = 3;
    public static final int OPS_READ = 4;
    public static final int OPS_WRITE = 5;
    static final String[] NAMES = {"bps-total", "bps-read", "bps-write", "iops-total", "iops-read", "iops-write"};
    /** QEMU's THROTTLE_VALUE_MAX. */
    static final long VALUE_MAX = 1_000_000_000_000_000L;

    public static final ThrottleLimits NONE = new ThrottleLimits(new long[6], new long[6], new long[] {1, 1, 1, 1, 1, 1});

    /**
     * Every limit as an option ({@code --iops-total}, its alias {@code --iops}, ..., {@code --bps-write-max-length}):
     * {@link #with} knows a limit only through this list, and the command reference lists it.
     */
    static final List<OptionTable.Option> OPTIONS = options();

    private static List<OptionTable.Option> options() {
        String[] what = {"bytes per second, reads and writes together", "bytes per second of reads",
            "bytes per second of writes", "requests per second, reads and writes together", "requests per second of reads",
            "requests per second of writes"};
        List<OptionTable.Option> out = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String n = "--" + NAMES[i];
            String alias = NAMES[i].endsWith("-total") ? n.substring(0, n.length() - "-total".length()) : null;
            OptionTable.Option avg = OptionTable.Option.valued(n, "N", "0", "average limit: " + what[i] + " (0: none)");
            OptionTable.Option max = OptionTable.Option.valued(n + "-max", "N", "0", "burst rate, at least the average "
                    + "(0: no bursts)");
            OptionTable.Option length = OptionTable.Option.valued(n + "-max-length", "S", "1", "seconds a burst at "
                    + n + "-max may last");
            if (alias != null) {
                avg = avg.alias(alias);
                max = max.alias(alias + "-max");
                length = length.alias(alias + "-max-length");
            }
            out.addAll(List.of(avg, max, length));
        }
        return List.copyOf(out);
    }

    public ThrottleLimits {
        avg = avg.clone();
        max = max.clone();
        length = length.clone();
        for (int i = 0; i < 6; i++) {
            String n = NAMES[i];
            if (avg[i] < 0 || avg[i] > VALUE_MAX || max[i] < 0 || max[i] > VALUE_MAX) {
                throw new IllegalArgumentException(n + " values must be in 0.." + VALUE_MAX);
            }
            if (length[i] < 1) {
                throw new IllegalArgumentException(n + "-max-length must be at least 1 second");
            }
            if (max[i] != 0 && avg[i] == 0) {
                throw new IllegalArgumentException(n + "-max needs " + n);
            }
            if (max[i] != 0 && max[i] < avg[i]) {
                throw new IllegalArgumentException(n + "-max (" + max[i] + ") cannot be lower than " + n + " ("
                        + avg[i] + ")");
            }
            if (length[i] > 1 && max[i] == 0) {
                throw new IllegalArgumentException(n + "-max-length needs " + n + "-max");
            }
        }
        for (int total : new int[] {BPS_TOTAL, OPS_TOTAL}) {
            if (avg[total] != 0 && (avg[total + 1] != 0 || avg[total + 2] != 0)) {
                String kind = total == BPS_TOTAL ? "bps" : "iops";
                throw new IllegalArgumentException(kind + "-total and " + kind + "-read/" + kind
                        + "-write cannot be used at the same time");
            }
        }
    }

    /** Whether any bucket has a limit. */
    public boolean any() {
        for (long a : avg) {
            if (a != 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * These limits with {@code options} applied: {@code iops}, {@code iops-total}, {@code iops-read}, ...,
     * {@code bps-write}, each also with {@code -max} and {@code -max-length} (QEMU's names; {@code iops} and
     * {@code bps} are the totals).
     */
    public ThrottleLimits with(Map<String, String> options) {
        long[] a = avg.clone();
        long[] m = max.clone();
        long[] l = length.clone();
        for (Map.Entry<String, String> e : options.entrySet()) {
            OptionTable.Option option = find(e.getKey());
            if (option == null) {
                throw new IllegalArgumentException("unknown limit '" + e.getKey() + "' (iops, iops-read, iops-write, bps,"
                        + " bps-read, bps-write, each with -max and -max-length)");
            }
            String key = option.name().substring(2);
            String suffix = "";
            if (key.endsWith("-max-length")) {
                suffix = "-max-length";
            } else if (key.endsWith("-max")) {
                suffix = "-max";
            }
            int index = List.of(NAMES).indexOf(key.substring(0, key.length() - suffix.length()));
            long value;
            try {
                value = Long.parseLong(e.getValue().trim());
            } catch (NumberFormatException ex) {
                throw new IllegalArgumentException(e.getKey() + ": '" + e.getValue() + "' is not a number");
            }
            switch (suffix) {
                case "-max" -> m[index] = value;
                case "-max-length" -> l[index] = value;
                default -> a[index] = value;
            }
        }
        return new ThrottleLimits(a, m, l);
    }

    /** The limit option of {@code key} ("iops", "bps-read-max", any case; the option without its "--"), or null. */
    static OptionTable.Option find(String key) {
        String name = "--" + key.toLowerCase(Locale.ROOT);
        for (OptionTable.Option o : OPTIONS) {
            if (o.names().contains(name)) {
                return o;
            }
        }
        return null;
    }

    /** The limits that are set, QEMU's names to values. */
    public Map<String, Long> describe() {
        Map<String, Long> out = new LinkedHashMap<>();
        for (int i = 0; i < 6; i++) {
            if (avg[i] != 0) {
                out.put(NAMES[i], avg[i]);
            }
            if (max[i] != 0) {
                out.put(NAMES[i] + "-max", max[i]);
            }
            if (length[i] != 1) {
                out.put(NAMES[i] + "-max-length", length[i]);
            }
        }
        return out;
    }
}
