package io.kickplug.examples.error;

import io.kickplug.api.blk.BackendIo;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One disk's error-injection settings, nbdkit-error-filter(1)'s parameters: {@code error=ERRNO},
 * {@code error-rate=PERCENT%|FRACTION} and {@code error-file=FILENAME} for every operation, and the same with
 * {@code pread}, {@code pwrite}, {@code trim}, {@code zero} or {@code flush} after {@code error-} for one kind
 * (which wins over the general one, in any order). A kind fails at its rate, with its errno, and with a file set
 * only while that file exists. Nothing is injected unless a rate is set.
 *
 * <p>virtio-blk has one failure status, VIRTIO_BLK_S_IOERR (VIRTIO 1.2 section 5.2.6): every injected error reaches
 * the guest as an I/O error; the errno name is in the IOException's message (Kickplug's log, NBD exports).
 */
public final class ErrorSettings {

    /** nbdkit's operation names for Kickplug's backend operations. */
    public enum Kind {
        PREAD, PWRITE, TRIM, ZERO, FLUSH;

        static Kind of(BackendIo.Op op) {
            return switch (op) {
                case READ -> PREAD;
                case WRITE -> PWRITE;
                case DISCARD -> TRIM;
                case WRITE_ZEROES -> ZERO;
                case FLUSH -> FLUSH;
            };
        }

        String key() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What one kind does: fail at {@code rate} (0..1) with {@code errno}, only while {@code file} exists. */
    public record Injection(String errno, double rate, String file) {
    }

    /** The errno names nbdkit's filter accepts. */
    static final Set<String> ERRNOS = Set.of("EPERM", "EIO", "ENOMEM", "EINVAL", "ENOSPC", "ESHUTDOWN");
    public static final ErrorSettings NONE = new ErrorSettings(Map.of());

    private final Map<String, String> raw;
    private final Injection[] byKind = new Injection[Kind.values().length];

    private ErrorSettings(Map<String, String> raw) {
        this.raw = Map.copyOf(raw);
        for (Kind k : Kind.values()) {
            String errno = get("error-" + k.key(), get("error", "EIO"));
            double rate = rate(get("error-" + k.key() + "-rate", get("error-rate", "0")));
            String file = get("error-" + k.key() + "-file", get("error-file", null));
            byKind[k.ordinal()] = new Injection(errno, rate, file);
        }
    }

    private String get(String key, String otherwise) {
        return raw.getOrDefault(key, otherwise);
    }

    static double rate(String text) {
        String t = text.trim();
        double r;
        try {
            r = t.endsWith("%") ? Double.parseDouble(t.substring(0, t.length() - 1)) / 100 : Double.parseDouble(t);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("error rate " + text + ": use PERCENT% or a fraction 0..1");
        }
        if (!(r >= 0 && r <= 1)) {
            throw new IllegalArgumentException("error rate " + text + " is outside 0%..100%");
        }
        return r;
    }

    /** These settings with {@code key=value} changes (checked); an empty value removes the key. */
    public ErrorSettings with(Map<String, String> changes) {
        Map<String, String> next = new TreeMap<>(raw);
        for (Map.Entry<String, String> e : changes.entrySet()) {
            String key = e.getKey().trim().toLowerCase(Locale.ROOT);
            String value = e.getValue().trim();
            if (!key.matches("error(-(pread|pwrite|trim|zero|flush))?(-(rate|file))?")) {
                throw new IllegalArgumentException("unknown setting " + key + " (error, error-rate, error-file, "
                        + "each also as error-pread..., error-pwrite..., error-trim..., error-zero..., error-flush...)");
            }
            if (value.isEmpty()) {
                next.remove(key);
            } else if (key.endsWith("-rate")) {
                rate(value);
                next.put(key, value);
            } else if (key.endsWith("-file")) {
                next.put(key, value);
            } else {
                String errno = value.toUpperCase(Locale.ROOT);
                if (!ERRNOS.contains(errno)) {
                    throw new IllegalArgumentException("errno " + value + ": one of " + new TreeSet<>(ERRNOS));
                }
                next.put(key, errno);
            }
        }
        return new ErrorSettings(next);
    }

    public Injection injection(Kind kind) {
        return byKind[kind.ordinal()];
    }

    /** The settings as given (what is kept in the disk's configuration). */
    public Map<String, String> asMap() {
        return raw;
    }

    @Override
    public String toString() {
        return raw.isEmpty() ? "no errors" : new TreeMap<>(raw).toString();
    }
}
