package io.kickplug.shell;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.transport.ExportStatus;
import java.util.ArrayList;
import java.util.List;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Gogo commands of scope {@code kp} for disks: thin adapters over {@link DiskManager} that return formatted
 * text. Errors are exceptions with one-line messages. {@code kp:io}, which needs the simulated guest, is
 * {@link IoCommand}: a daemon whose statements attach disks does not start the guest bundle before them.
 */
@Component(service = KpCommands.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=attach",
    "osgi.command.function=detach",
    "osgi.command.function=disks",
    "osgi.command.function=resize",
})
public final class KpCommands {

    /**
     * Dynamic: the commands stay while the disk manager is away (its bundle, or the transport or virtqueue
     * bundle it needs, stopped or being updated) and say so, instead of vanishing.
     */
    @Reference(name = "diskManager", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile DiskManager disks;

    /** Optional: exports of disks to other processes (the vhost-user bundle), shown by kp:disks. */
    @Reference(name = "exportStatus", cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile List<ExportStatus> exportStatus = List.of();

    public KpCommands() {
    }

    /** For tests and for callers outside DS. */
    KpCommands(DiskManager disks) {
        this(disks, List.of());
    }

    /** For tests: with export status services. */
    KpCommands(DiskManager disks, List<ExportStatus> exportStatus) {
        this.disks = disks;
        this.exportStatus = List.copyOf(exportStatus);
    }

    @Descriptor("attach a disk: a virtio-blk device with a file, memory or null backend behind an in-process "
            + "transport")
    public String attach(
            @Descriptor("backend: file, memory (default), null, nbd or rbd")
            @Parameter(names = "--backend", absentValue = "memory") String backend,
            @Descriptor("image file of the file backend")
            @Parameter(names = "--file", absentValue = "") String file,
            @Descriptor("nbd backend: nbd://host[:port]/export or nbd+unix:///export?socket=PATH")
            @Parameter(names = "--uri", absentValue = "") String uri,
            @Descriptor("rbd backend: the pool of the image (QEMU rbd's pool)")
            @Parameter(names = "--pool", absentValue = "") String pool,
            @Descriptor("rbd backend: the image")
            @Parameter(names = "--image", absentValue = "") String image,
            @Descriptor("rbd backend: a snapshot of the image, served read-only")
            @Parameter(names = "--snapshot", absentValue = "") String snapshot,
            @Descriptor("rbd backend: the RADOS namespace in the pool (default: none)")
            @Parameter(names = "--namespace", absentValue = "") String namespace,
            @Descriptor("rbd backend: the Ceph configuration file (default: $CEPH_CONF, /etc/ceph/ceph.conf)")
            @Parameter(names = "--conf", absentValue = "") String conf,
            @Descriptor("rbd backend: the Ceph client id without 'client.' (QEMU rbd's user; default admin)")
            @Parameter(names = "--id", absentValue = "") String id,
            @Descriptor("rbd backend: the keyring file (default: the configuration's)")
            @Parameter(names = "--keyring", absentValue = "") String keyring,
            @Descriptor("refuse writes (VIRTIO_BLK_F_RO)")
            @Parameter(names = "--readonly", presentValue = "true", absentValue = "false") boolean readOnly,
            @Descriptor("bypass the host page cache (O_DIRECT) where the backend can")
            @Parameter(names = "--direct", presentValue = "true", absentValue = "false") boolean direct,
            @Descriptor("number of virtqueues (default 1)")
            @Parameter(names = "--queues", absentValue = "1") String queues,
            @Descriptor("size of each virtqueue, a power of two (default 256)")
            @Parameter(names = "--queue-size", absentValue = "256") String queueSize,
            @Descriptor("I/O threads serving the queues (default 1)")
            @Parameter(names = "--iothreads", absentValue = "1") String ioThreads,
            @Descriptor("queues of each I/O thread, e.g. \"0,2;1,3\" (default: round-robin)")
            @Parameter(names = "--mapping", absentValue = "") String mapping,
            @Descriptor("transport: mmio (default) or pci (virtio-pci modern with MSI-X)")
            @Parameter(names = "--transport", absentValue = "mmio") String transport,
            @Descriptor("virtqueue format offered to the guest: split (default) or packed (VIRTIO_F_RING_PACKED)")
            @Parameter(names = "--ring", absentValue = "split") String ring,
            @Descriptor("when split rings publish avail_event with EVENT_IDX: enable (default, as Linux vhost: when "
                    + "notifications are re-enabled) or pop (as QEMU's 2014 virtio-blk: after every chain taken)")
            @Parameter(names = "--avail-event", absentValue = "enable") String availEvent,
            @Descriptor("lock of the tracked-requests list: yielding, mutex (default) or sharded")
            @Parameter(names = "--tracked-lock", absentValue = "mutex") String trackedLock,
            @Descriptor("GET_ID answer, at most 20 bytes (default: the name)")
            @Parameter(names = "--serial", absentValue = "") String serial,
            @Descriptor("worker threads for a blocking (file) backend (default 8)")
            @Parameter(names = "--workers", absentValue = "8") String workers,
            @Descriptor("null backend: reads fill the buffers with zeroes (QEMU null-co read-zeroes; default off)")
            @Parameter(names = "--read-zeroes", presentValue = "true", absentValue = "false") boolean readZeroes,
            @Descriptor("null backend: completion delay of every request in ns (QEMU null-co latency-ns; default 0)")
            @Parameter(names = "--latency-ns", absentValue = "0") String latencyNs,
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("NAME [SIZE]: the disk name (letters, digits, '-', '_', '.') and its size in bytes with an "
                    + "optional K, M, G or T suffix, e.g. 64M (a file disk without SIZE has its image's size, an nbd disk its export's, an rbd disk its image's)")
            String... nameAndSize) {
        if (nameAndSize.length < 1 || nameAndSize.length > 2) {
            throw new IllegalArgumentException("usage: kp:attach [options] NAME [SIZE]");
        }
        String name = nameAndSize[0];
        String size = nameAndSize.length == 2 ? nameAndSize[1] : null;
        AttachArgs.Options options = new AttachArgs.Options(backend, file, readOnly, direct, queues, queueSize,
                ioThreads, mapping, transport, trackedLock, serial, workers);
        DiskSpec spec = AttachArgs.withNullOptions(AttachArgs.spec(name, size, options), readZeroes, latencyNs);
        spec = AttachArgs.withAvailEvent(AttachArgs.withRing(AttachArgs.withUri(spec, uri), ring), availEvent);
        spec = AttachArgs.withRbd(spec, new AttachArgs.Rbd(pool, namespace, image, snapshot, conf, id, keyring));
        DiskInfo attached = manager().attach(spec);
        return json ? JsonShapes.oneDisk(attached) : AttachArgs.describe(attached);
    }

    @Descriptor("resize a disk; the driver gets a configuration-change notification")
    public String resize(
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("disk name") String name,
            @Descriptor("new size in bytes with an optional K, M, G or T suffix") String size) {
        DiskInfo info = manager().resize(name, Args.size("size", size));
        if (json) {
            return JsonShapes.oneDisk(info);
        }
        return "resized " + name + " to " + Sizes.format(info.sizeBytes());
    }

    @Descriptor("detach a disk: reset its device, stop its I/O threads, close its backend, delete its configuration")
    public String detach(
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("disk name") String name) {
        DiskManager dm = disks;
        if (dm == null) {
            throw new IllegalStateException("cannot detach '" + name + "' now: " + DiskManagerWait.ABSENT
                    + "; its configuration is kept and it comes back with the bundles (detach it then)");
        }
        dm.detach(name);
        return json ? JsonShapes.detached(name) : "detached " + name;
    }

    @Descriptor("list attached disks")
    public String disks(
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json) {
        List<ExportStatus.Export> exports = new ArrayList<>();
        for (ExportStatus s : exportStatus) {
            try {
                exports.addAll(s.exports());
            } catch (RuntimeException goingAway) {
                // the exporting bundle is stopping; its exports are going away with it
            }
        }
        DiskManagerWait.Listing listing = DiskManagerWait.awaitConfigured(this::currentDisks, WAIT_MILLIS);
        if (json) {
            return JsonShapes.disks(listing.attached(), exports);
        }
        StringBuilder out = new StringBuilder(DiskTable.format(listing.attached(), exports));
        for (String name : listing.pending()) {
            out.append(System.lineSeparator()).append(name)
                    .append(": configured, not attached (still being rebuilt, or it failed: see the log)");
        }
        return out.toString();
    }

    /** How long kp:disks waits for configured disks being rebuilt after a bundle update. */
    private static final long WAIT_MILLIS = 10_000;

    private DiskManager currentDisks() {
        return disks;
    }

    /** The disk manager, or a one-line error saying why there is none. */
    private DiskManager manager() {
        DiskManager dm = DiskManagerWait.await(this::currentDisks, WAIT_MILLIS);
        if (dm == null) {
            throw new IllegalStateException(DiskManagerWait.ABSENT);
        }
        return dm;
    }
}
