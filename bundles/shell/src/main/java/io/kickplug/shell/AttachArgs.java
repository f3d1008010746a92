package io.kickplug.shell;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.transport.TransportKind;

/** Turns {@code kp:attach} arguments into a {@link DiskSpec}, and the result into a line of text. */
public final class AttachArgs {

    private AttachArgs() {
    }

    public static DiskSpec spec(String name, String size, String queues, String queueSize, String ioThreads,
            String transport, String backend) {
        long bytes = Sizes.parse(size);
        // Gogo reads an unquoted `null` as the null literal, so "--backend null" arrives as null; an absent
        // option arrives as its default "memory".
        String kind = backend == null ? "null" : backend.trim().toLowerCase(java.util.Locale.ROOT);
        if (!kind.equals("memory") && !kind.equals("null")) {
            throw new IllegalArgumentException("unknown backend '" + backend + "' (expected memory or null)");
        }
        return new DiskSpec(name, new BackendSpec(kind, null, bytes, false), TransportKind.parse(transport),
                Args.positiveInt("--queues", queues), Args.positiveInt("--queue-size", queueSize),
                Args.positiveInt("--iothreads", ioThreads), null, DiskSpec.DEFAULT_GUEST_MEMORY);
    }

    /** "attached d1: 64 MiB memory disk on mmio, 2 queues of 256, 1 I/O thread". */
    public static String describe(DiskInfo d) {
        return "attached " + d.name() + ": " + Sizes.format(d.sizeBytes()) + " " + d.backend()
                + (d.readOnly() ? " (read-only)" : "") + " disk on " + d.transport().label() + ", "
                + plural(d.numQueues(), "queue") + " of " + d.queueSize() + ", "
                + plural(d.ioThreads(), "I/O thread");
    }

    private static String plural(int n, String word) {
        return n + " " + word + (n == 1 ? "" : "s");
    }
}
