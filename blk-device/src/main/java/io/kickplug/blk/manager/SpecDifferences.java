package io.kickplug.blk.manager;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.virtio.RingFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Whether {@code kp:attach} asks for the disk a configuration already holds: every property a disk is attached
 * with, but the ones a user changes while it runs ({@link DiskSettings}: size, ring, tracked lock), which the
 * configuration keeps and which win.
 */
final class SpecDifferences {

    private SpecDifferences() {
    }

    /** {@code spec} without the settings that change while a disk runs. */
    static DiskSpec attachForm(DiskSpec spec) {
        BackendSpec b = spec.backend();
        return spec.withTrackedLock(TrackedLockKind.MUTEX).withRing(RingFormat.SPLIT).withBackend(
                new BackendSpec(b.kind(), b.path(), 0, b.readOnly(), b.direct(), b.readZeroes(), b.latencyNs()));
    }

    /**
     * What differs between the disk {@code kept} in a configuration and the one {@code asked} for, in the
     * configuration's property names ("queues 1 kept, 2 asked"); empty when they are the same disk. Both in
     * {@link #attachForm}.
     */
    static List<String> of(DiskSpec kept, DiskSpec asked) {
        List<String> out = new ArrayList<>();
        compare(out, "backend", kept, asked, s -> s.backend().kind());
        compare(out, "file", kept, asked, s -> s.backend().path());
        compare(out, "readonly", kept, asked, s -> s.backend().readOnly());
        compare(out, "direct", kept, asked, s -> s.backend().direct());
        compare(out, "read.zeroes", kept, asked, s -> s.backend().readZeroes());
        compare(out, "latency.ns", kept, asked, s -> s.backend().latencyNs());
        compare(out, "transport", kept, asked, s -> s.transport().label());
        compare(out, "queues", kept, asked, DiskSpec::numQueues);
        compare(out, "queue.size", kept, asked, DiskSpec::queueSize);
        compare(out, "iothreads", kept, asked, DiskSpec::ioThreads);
        compare(out, "mapping", kept, asked, DiskSpec::mapping);
        compare(out, "serial", kept, asked, DiskSpec::serial);
        compare(out, "workers", kept, asked, DiskSpec::workers);
        compare(out, "avail.event", kept, asked, s -> s.availEvent().id());
        compare(out, "guest memory", kept, asked, DiskSpec::guestMemoryBytes);
        // Anything a later DiskSpec adds (not named above) still tells the disks apart.
        if (out.isEmpty() && !kept.equals(asked)) {
            out.add(kept + " kept, " + asked + " asked");
        }
        return out;
    }

    private static void compare(List<String> out, String property, DiskSpec kept, DiskSpec asked,
            Function<DiskSpec, Object> field) {
        Object k = field.apply(kept);
        Object a = field.apply(asked);
        if (!Objects.equals(k, a)) {
            out.add(property + " " + k + " kept, " + a + " asked");
        }
    }
}
