package io.kickplug.blk.manager;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.RbdImage;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.AvailEventMode;
import io.kickplug.api.virtio.RingFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Turns the properties of one {@code io.kickplug.disk} factory configuration into a {@link DiskSpec}. Only
 * types and syntax are checked here (one-line {@link DiskException} naming the property); ranges, files and
 * backends are checked by the disk manager's attach.
 *
 * <p>Properties: {@code name} (required), {@code backend} (file, memory or null; default file when
 * {@code file} is set, else memory), {@code file}, {@code size} (bytes with an optional K, M, G or T
 * suffix; optional for file), {@code readonly}, {@code direct}, {@code queues} (1), {@code queue.size}
 * (256), {@code iothreads} (1), {@code mapping} ("0,2;1,3": the queues of each I/O thread; empty for
 * round-robin), {@code transport} (mmio), {@code ring} (split or packed: the virtqueue format offered, split by
 * default), {@code avail.event} (enable or pop: when split rings publish avail_event, enable by default), {@code serial}, {@code tracked.lock} (mutex), {@code workers}
 * (8), {@code notify.strategy} (immediate; see {@link #notifyStrategy}), {@code notify.queues} (per-queue
 * exceptions, "1=bh,3=defer-call"), {@code poll} (false: device-side polling of the queues),
 * {@code poll.max.ns} (32768, QEMU's poll-max-ns), {@code poll.grow} and {@code poll.shrink} (0: QEMU's
 * defaults); for the null backend only, QEMU null-co's {@code read.zeroes} (false) and {@code latency.ns} (0, at
 * most one second); for the rbd backend, QEMU rbd's {@code pool}, {@code namespace}, {@code image},
 * {@code snapshot}, {@code conf} and {@code user}, and {@code keyring}. The settings a user changes while the disk runs are written back by the disk manager
 * ({@link DiskSettings}).
 */
public final class DiskConfig {

    public static final String FACTORY_PID = "io.kickplug.disk";
    /** The completion-notification strategy of every queue of the disk. */
    public static final String NOTIFY_STRATEGY = "notify.strategy";

    private DiskConfig() {
    }

    public static DiskSpec toSpec(Map<String, ?> props) {
        String name = string(props, "name", null);
        if (name == null || name.isBlank()) {
            throw new DiskException("disk configuration has no 'name'");
        }
        String file = string(props, "file", null);
        if (file != null && file.isBlank()) {
            file = null;
        }
        String backend = string(props, "backend", file != null ? "file" : "memory").trim().toLowerCase(Locale.ROOT);
        long size = size(props, "size", 0);
        String uri = string(props, "uri", null);
        if (uri != null && uri.isBlank()) {
            uri = null;
        }
        if (uri != null && !usesUri(backend)) {
            throw new DiskException("disk '" + name + "': property 'uri' is only for the nbd backend, not '" + backend
                    + "'");
        }
        if (usesUri(backend)) {
            if (uri == null) {
                throw new DiskException("disk '" + name + "': the " + backend + " backend needs property 'uri'");
            }
            if (file != null) {
                throw new DiskException("disk '" + name + "': property 'file' is only for the file backend, not '"
                        + backend + "'");
            }
            file = uri; // the backend's path is its URI
        }
        String rbd = rbdPath(props, name, backend);
        if (rbd != null) {
            if (file != null) {
                throw new DiskException("disk '" + name + "': property 'file' is only for the file backend, not '"
                        + backend + "'");
            }
            file = rbd; // the backend's path is QEMU's rbd filename
        }
        if (!backend.equals("file") && !usesUri(backend) && rbd == null && file != null) {
            throw new DiskException("disk '" + name + "': property 'file' is only for the file backend, not '"
                    + backend + "'");
        }
        if (backend.equals("file") && file == null) {
            throw new DiskException("disk '" + name + "': the file backend needs property 'file'");
        }
        TransportKind transport = parsed(props, name, "transport", "mmio", t -> TransportKind.parse(t.trim()));
        TrackedLockKind lock = parsed(props, name, "tracked.lock", "mutex", t -> TrackedLockKind.parse(t.trim()));
        RingFormat ring = parsed(props, name, "ring", "split", RingFormat::parse);
        AvailEventMode availEvent = parsed(props, name, "avail.event", "enable", AvailEventMode::parse);
        List<List<Integer>> mapping = parsed(props, name, "mapping", "", DiskSpec::parseMapping);
        String serial = string(props, "serial", null);
        if (serial != null && serial.isEmpty()) {
            serial = null;
        }
        boolean readZeroes = bool(props, "read.zeroes");
        long latencyNs = nanos(props, "latency.ns");
        if (!backend.equals("null") && (readZeroes || latencyNs != 0)) {
            throw new DiskException("disk '" + name + "': properties 'read.zeroes' and 'latency.ns' are only for the"
                    + " null backend, not '" + backend + "'");
        }
        BackendSpec backendSpec = new BackendSpec(backend, file, size, bool(props, "readonly"), bool(props, "direct"),
                readZeroes, latencyNs);
        return new DiskSpec(name.trim(), backendSpec, transport, integer(props, "queues", 1),
                integer(props, "queue.size", DiskSpec.DEFAULT_QUEUE_SIZE), integer(props, "iothreads", 1), mapping,
                serial, lock, integer(props, "workers", DiskSpec.DEFAULT_WORKERS), DiskSpec.DEFAULT_GUEST_MEMORY, ring,
                availEvent);
    }

    /** The rbd backend's properties, as QEMU's rbd driver names them (and keyring). */
    static final List<String> RBD_PROPERTIES = List.of("pool", "namespace", "image", "snapshot", "conf", "user",
            "keyring");

    /**
     * The rbd backend's image from its properties ({@link #RBD_PROPERTIES}), as the backend's path; null for another
     * backend (which must have none of them).
     */
    private static String rbdPath(Map<String, ?> props, String name, String backend) {
        String[] v = new String[RBD_PROPERTIES.size()];
        String given = null;
        for (int i = 0; i < v.length; i++) {
            v[i] = string(props, RBD_PROPERTIES.get(i), null);
            if (v[i] != null && v[i].isBlank()) {
                v[i] = null;
            }
            if (v[i] != null && given == null) {
                given = RBD_PROPERTIES.get(i);
            }
        }
        if (!RbdImage.KIND.equals(backend)) {
            if (given != null) {
                throw new DiskException("disk '" + name + "': property '" + given + "' is only for the rbd backend, not '"
                        + backend + "'");
            }
            return null;
        }
        try {
            return new RbdImage(v[0], v[1], v[2], v[3], v[4], v[5], v[6]).toPath();
        } catch (IllegalArgumentException e) {
            throw new DiskException("disk '" + name + "': " + e.getMessage() + " (properties 'pool' and 'image')");
        }
    }

    /** The rbd properties of an rbd disk's backend path ({@link RbdImage#toPath()}); the absent ones left out. */
    static Map<String, String> rbdProperties(String path) {
        RbdImage i = RbdImage.parse(path);
        Map<String, String> p = new java.util.LinkedHashMap<>();
        String[] v = {i.pool(), i.namespace(), i.image(), i.snapshot(), i.conf(), i.user(), i.keyring()};
        for (int k = 0; k < v.length; k++) {
            if (v[k] != null) {
                p.put(RBD_PROPERTIES.get(k), v[k]);
            }
        }
        return p;
    }

    /** The properties of a disk configuration that the block-device bundle reads (the metatype's attributes). */
    static final java.util.Set<String> PROPERTIES = java.util.Set.of("name", "backend", "file", "uri", "size",
            "pool", "namespace", "image", "snapshot", "conf", "user", "keyring",
            "readonly", "direct", "read.zeroes", "latency.ns", "queues", "queue.size", "iothreads", "mapping",
            "transport", "ring", "avail.event", "serial", "tracked.lock", "workers", NOTIFY_STRATEGY, "notify.queues",
            "poll", "poll.max.ns", "poll.grow", "poll.shrink");

    /**
     * Checks the name prefix of another bundle's properties in a disk configuration ({@code throttle.}): ends in
     * '.', and names none of this bundle's.
     *
     * @throws IllegalArgumentException otherwise
     */
    static void checkForeignPrefix(String prefix) {
        if (prefix == null || prefix.length() < 2 || !prefix.endsWith(".")) {
            throw new IllegalArgumentException("settings prefix '" + prefix + "' does not end in '.'");
        }
        for (String own : PROPERTIES) {
            if (own.startsWith(prefix) || (own + ".").equals(prefix)) {
                throw new IllegalArgumentException("settings prefix '" + prefix + "' names the disk's own property '"
                        + own + "'");
            }
        }
    }

    /** Whether a backend kind is reached by a URI (property {@code uri}, kept in the spec's path): nbd. */
    public static boolean usesUri(String kind) {
        return "nbd".equals(kind);
    }

    /** Whether a backend kind takes its size from its storage when the size is 0: file, nbd, rbd. */
    public static boolean sizedByBackend(String kind) {
        return "file".equals(kind) || usesUri(kind) || RbdImage.KIND.equals(kind);
    }

    /** Device-side polling from a disk configuration. */
    public record Polling(boolean enabled, PollParams params) {
    }

    /** The {@code poll}, {@code poll.max.ns}, {@code poll.grow} and {@code poll.shrink} properties. */
    public static Polling polling(Map<String, ?> props) {
        boolean enabled = bool(props, "poll");
        long maxNs = pollNumber(props, "poll.max.ns", PollParams.DEFAULT_MAX_NS, PollParams.LIMIT_MAX_NS,
                "nanoseconds in 0.." + PollParams.LIMIT_MAX_NS);
        long grow = pollNumber(props, "poll.grow", 0, 1024, "0 (QEMU's default, 2) or 2..1024");
        long shrink = pollNumber(props, "poll.shrink", 0, 1024, "0 (reset the window) or 2..1024");
        if (grow == 1 || shrink == 1) {
            throw new DiskException("disk configuration property '" + (grow == 1 ? "poll.grow" : "poll.shrink")
                    + "' must not be 1");
        }
        return new Polling(enabled, new PollParams(maxNs, grow, shrink));
    }

    /** A number property of polling in 0..{@code max}, {@code absent} when absent or blank. */
    private static long pollNumber(Map<String, ?> props, String key, long absent, long max, String expected) {
        Object v = props.get(key);
        if (v == null || v.toString().isBlank()) {
            return absent;
        }
        long n;
        try {
            n = v instanceof Number num ? num.longValue() : Long.parseLong(v.toString().trim());
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 0 || n > max) {
            throw new DiskException("disk configuration property '" + key + "' must be " + expected + ", not '" + v
                    + "'");
        }
        return n;
    }

    /**
     * The {@value #NOTIFY_STRATEGY} property: a strategy name, "immediate" when absent or blank. A name no
     * bound service carries is valid: the queues use immediate until it is bound.
     *
     * @throws DiskException when the name is malformed
     */
    public static String notifyStrategy(Map<String, ?> props) {
        String value = string(props, NOTIFY_STRATEGY, "");
        if (value.isBlank()) {
            return io.kickplug.api.notify.CompletionNotifier.IMMEDIATE;
        }
        try {
            return io.kickplug.blk.notify.NotifierRegistry.checkName(value);
        } catch (DiskException e) {
            throw new DiskException("disk configuration property '" + NOTIFY_STRATEGY + "': " + e.getMessage());
        }
    }

    /** Property {@code key} of disk {@code disk} parsed by {@code parse}; its error names the disk and the key. */
    static <T> T parsed(Map<String, ?> props, String disk, String key, String absent,
            Function<String, T> parse) {
        try {
            return parse.apply(string(props, key, absent));
        } catch (IllegalArgumentException e) {
            throw new DiskException("disk '" + disk + "': property '" + key + "': " + e.getMessage());
        }
    }

    static String string(Map<String, ?> props, String key, String absent) {
        Object v = props.get(key);
        return v == null ? absent : v.toString();
    }

    private static boolean bool(Map<String, ?> props, String key) {
        Object v = props.get(key);
        if (v == null) {
            return false;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        String s = v.toString().trim();
        if (s.equalsIgnoreCase("true")) {
            return true;
        }
        if (s.equalsIgnoreCase("false") || s.isEmpty()) {
            return false;
        }
        throw new DiskException("disk configuration property '" + key + "' must be true or false, not '" + v + "'");
    }

    private static int integer(Map<String, ?> props, String key, int absent) {
        Object v = props.get(key);
        if (v == null) {
            return absent;
        }
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).intValue();
        }
        if (v instanceof Long l && l == l.intValue()) {
            return l.intValue();
        }
        try {
            return Integer.parseInt(v.toString().trim());
        } catch (NumberFormatException e) {
            throw new DiskException("disk configuration property '" + key + "' must be an integer, not '" + v + "'");
        }
    }

    /** Nanoseconds, 0 to {@link BackendSpec#MAX_LATENCY_NS}; 0 when absent or blank. */
    private static long nanos(Map<String, ?> props, String key) {
        Object v = props.get(key);
        if (v == null || v.toString().isBlank()) {
            return 0;
        }
        long ns;
        try {
            ns = v instanceof Number n ? n.longValue() : Long.parseLong(v.toString().trim());
        } catch (NumberFormatException e) {
            ns = -1;
        }
        if (ns < 0 || ns > BackendSpec.MAX_LATENCY_NS) {
            throw new DiskException("disk configuration property '" + key + "' must be nanoseconds in 0.."
                    + BackendSpec.MAX_LATENCY_NS + ", not '" + v + "'");
        }
        return ns;
    }

    static long size(Map<String, ?> props, String key, long absent) {
        Object v = props.get(key);
        if (v == null || v.toString().isBlank()) {
            return absent;
        }
        if (v instanceof Long || v instanceof Integer) {
            return ((Number) v).longValue();
        }
        try {
            return DiskSpec.parseSize(v.toString());
        } catch (IllegalArgumentException e) {
            throw new DiskException("disk configuration property '" + key + "' must be a size in bytes with an "
                    + "optional K, M, G or T suffix, not '" + v + "'");
        }
    }
}
