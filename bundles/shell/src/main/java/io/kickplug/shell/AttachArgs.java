package io.kickplug.shell;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.RbdImage;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.AvailEventMode;
import io.kickplug.api.virtio.RingFormat;
import java.util.List;
import java.util.Locale;

/** Turns {@code kp:attach} arguments into a {@link DiskSpec}, and the result into a line of text. */
public final class AttachArgs {

    private AttachArgs() {
    }

    /**
     * The options of {@code kp:attach} as Gogo passes them: strings (an unquoted {@code null} arrives as
     * {@code null}), absent ones as their defaults.
     */
    public record Options(String backend, String file, boolean readOnly, boolean direct, String queues,
            String queueSize, String ioThreads, String mapping, String transport, String trackedLock, String serial,
            String workers) {

        /** Every option at its default. */
        public static Options defaults() {
            return new Options("memory", "", false, false, "1", "256", "1", "", "mmio", "mutex", "",
                    Integer.toString(DiskSpec.DEFAULT_WORKERS));
        }
    }

    /** The foundation's form: memory or null backend, queues, I/O threads and transport only. */
    public static DiskSpec spec(String name, String size, String queues, String queueSize, String ioThreads,
            String transport, String backend) {
        Options d = Options.defaults();
        return spec(name, size, new Options(backend, d.file(), false, false, queues, queueSize, ioThreads, d.mapping(),
                transport, d.trackedLock(), d.serial(), d.workers()));
    }

    /**
     * @param size bytes with an optional K, M, G or T suffix; {@code null} or empty only for the file backend
     *     (the file's size)
     */
    public static DiskSpec spec(String name, String size, Options o) {
        // Gogo reads an unquoted `null` as the null literal, so "--backend null" arrives as null; an absent
        // option arrives as its default "memory".
        String kind = o.backend() == null ? "null" : o.backend().trim().toLowerCase(Locale.ROOT);
        if (!kind.equals("memory") && !kind.equals("null") && !kind.equals("file") && !kind.equals("nbd")
                && !kind.equals(RbdImage.KIND)) {
            throw new IllegalArgumentException("unknown backend '" + o.backend()
                    + "' (expected file, memory, null, nbd or rbd)");
        }
        String file = o.file() == null || o.file().isBlank() ? null : o.file().trim();
        if (kind.equals("file") && file == null) {
            throw new IllegalArgumentException("the file backend needs --file PATH");
        }
        if (!kind.equals("file") && file != null) {
            throw new IllegalArgumentException("--file is only for --backend file");
        }
        boolean noSize = size == null || size.isBlank();
        if (noSize && !kind.equals("file") && !kind.equals("nbd") && !kind.equals(RbdImage.KIND)) {
            throw new IllegalArgumentException("a " + kind + " disk needs a SIZE");
        }
        long bytes = noSize ? 0 : Sizes.parse(size);
        TrackedLockKind lock;
        try {
            lock = TrackedLockKind.parse(o.trackedLock() == null ? "null" : o.trackedLock().trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--tracked-lock: " + e.getMessage());
        }
        String serial = o.serial() == null || o.serial().isEmpty() ? null : o.serial();
        return new DiskSpec(name, new BackendSpec(kind, file, bytes, o.readOnly(), o.direct()),
                TransportKind.parse(o.transport()), Args.positiveInt("--queues", o.queues()),
                Args.positiveInt("--queue-size", o.queueSize()), Args.positiveInt("--iothreads", o.ioThreads()),
                mapping(o.mapping()), serial, lock, Args.positiveInt("--workers", o.workers()),
                DiskSpec.DEFAULT_GUEST_MEMORY);
    }

    /**
     * Adds the null backend's options ({@code --read-zeroes}, {@code --latency-ns}, QEMU null-co's) to a spec.
     *
     * @throws IllegalArgumentException for a latency that is not nanoseconds in range, or options on another backend
     */
    public static DiskSpec withNullOptions(DiskSpec spec, boolean readZeroes, String latencyNs) {
        long ns = latencyNs == null || latencyNs.isBlank() ? 0 : Args.inRange("--latency-ns", latencyNs, 0,
                BackendSpec.MAX_LATENCY_NS, "nanoseconds in 0.." + BackendSpec.MAX_LATENCY_NS);
        if (!readZeroes && ns == 0) {
            return spec;
        }
        if (!"null".equals(spec.backend().kind())) {
            throw new IllegalArgumentException("--read-zeroes and --latency-ns are only for --backend null");
        }
        return spec.withBackend(spec.backend().withNullOptions(readZeroes, ns));
    }

    /**
     * Adds {@code --uri} (the nbd backend's server and export, kept as the backend's path) to a spec.
     *
     * @throws IllegalArgumentException for an nbd disk without a URI, or a URI on another backend
     */
    public static DiskSpec withUri(DiskSpec spec, String uri) {
        boolean none = uri == null || uri.isBlank();
        BackendSpec b = spec.backend();
        if (!"nbd".equals(b.kind())) {
            if (!none) {
                throw new IllegalArgumentException("--uri is only for --backend nbd");
            }
            return spec;
        }
        if (none) {
            throw new IllegalArgumentException("the nbd backend needs --uri nbd://host[:port]/export or "
                    + "--uri nbd+unix:///export?socket=PATH");
        }
        return spec.withBackend(new BackendSpec(b.kind(), uri.trim(), b.sizeBytes(), b.readOnly(), b.direct()));
    }

    /** The rbd backend's options of {@code kp:attach}, as QEMU's rbd driver names them ({@code --id} is its user). */
    public record Rbd(String pool, String namespace, String image, String snapshot, String conf, String id,
            String keyring) {

        boolean any() {
            for (String v : new String[] {pool, namespace, image, snapshot, conf, id, keyring}) {
                if (v != null && !v.isBlank()) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Adds the rbd backend's image ({@code --pool}, {@code --image}, ...; kept as the backend's path in QEMU's rbd
     * filename syntax) to a spec. A snapshot makes the disk read-only.
     *
     * @throws IllegalArgumentException for an rbd disk without pool or image, or rbd options on another backend
     */
    public static DiskSpec withRbd(DiskSpec spec, Rbd o) {
        BackendSpec b = spec.backend();
        if (!RbdImage.KIND.equals(b.kind())) {
            if (o.any()) {
                throw new IllegalArgumentException("--pool, --image, --snapshot, --namespace, --conf, --id and "
                        + "--keyring are only for --backend rbd");
            }
            return spec;
        }
        RbdImage image;
        try {
            image = new RbdImage(o.pool(), o.namespace(), o.image(), o.snapshot(), o.conf(), o.id(), o.keyring());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + " (--pool P --image I)");
        }
        return spec.withBackend(new BackendSpec(b.kind(), image.toPath(), b.sizeBytes(),
                b.readOnly() || image.snapshot() != null, b.direct()));
    }

    /** Applies {@code --ring split|packed} (the virtqueue format the device offers) to a spec. */
    public static DiskSpec withRing(DiskSpec spec, String ring) {
        try {
            return spec.withRing(RingFormat.parse(ring == null ? "split" : ring));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--ring: " + e.getMessage());
        }
    }

    /** Applies {@code --avail-event enable|pop} (when split rings publish avail_event) to a spec. */
    public static DiskSpec withAvailEvent(DiskSpec spec, String mode) {
        try {
            return spec.withAvailEvent(AvailEventMode.parse(mode == null ? "enable" : mode));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--avail-event: " + e.getMessage());
        }
    }

    /** Parses "--mapping 0,2;1,3": entry {@code i} lists the queues of I/O thread {@code i}; empty: round-robin. */
    public static List<List<Integer>> mapping(String text) {
        try {
            return DiskSpec.parseMapping(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid --mapping " + e.getMessage());
        }
    }

    /** "0,2;1,3", the syntax of --mapping; "-" for none. */
    public static String formatMapping(List<List<Integer>> mapping) {
        if (mapping == null || mapping.isEmpty()) {
            return "-";
        }
        StringBuilder out = new StringBuilder();
        for (List<Integer> queues : mapping) {
            if (out.length() > 0) {
                out.append(';');
            }
            out.append(String.join(",", queues.stream().map(String::valueOf).toList()));
        }
        return out.toString();
    }

    /** "attached d1: 64 MiB memory disk on mmio, 2 queues of 256, 1 I/O thread". */
    public static String describe(DiskInfo d) {
        return "attached " + d.name() + ": " + Sizes.format(d.sizeBytes()) + " " + d.backend()
                + (d.readOnly() ? " (read-only)" : "") + " disk on " + d.transport().label() + ", "
                + plural(d.numQueues(), "queue") + " of " + d.queueSize() + ", "
                + plural(d.ioThreads(), "I/O thread")
                + (d.mapping().isEmpty() || d.ioThreads() == 1 ? "" : " (" + formatMapping(d.mapping()) + ")")
                + (d.path() == null ? "" : (RbdImage.KIND.equals(d.backend()) ? ", image " : ", file ") + d.path())
                + (d.trackedLock() == TrackedLockKind.MUTEX ? "" : ", " + d.trackedLock().label() + " tracked lock")
                + (d.ring() == RingFormat.SPLIT ? "" : ", " + d.ring().id() + " ring");
    }

    private static String plural(int n, String word) {
        return n + " " + word + (n == 1 ? "" : "s");
    }
}
