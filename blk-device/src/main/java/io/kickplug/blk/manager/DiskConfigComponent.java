package io.kickplug.blk.manager;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.notify.NotificationControl;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * One disk per {@code io.kickplug.disk} factory configuration: attached on activation, re-attached when
 * the configuration changes, detached when it is deleted. The settings a user changes while the disk runs
 * ({@link DiskSettings}: strategies, polling, tracked lock, ring, size), which the disk manager writes into the
 * configuration as they are made, are applied through their live paths when the disk is rebuilt and when only
 * they changed (no re-attach; a change that only records what the disk runs with already applies nothing). A bad
 * configuration logs one line and leaves nothing attached.
 *
 * <p>When the disk manager goes away (its bundle, or a bundle it needs, stops or is updated), this component
 * goes too but does not detach: the manager quiesces the disks and keeps their shared memory, and the
 * component that comes back with the manager attaches the disk again from the same configuration. A disk
 * that {@code kp:attach} attached before writing this configuration is adopted, not attached twice.
 */
@Component(configurationPid = DiskConfig.FACTORY_PID, configurationPolicy = ConfigurationPolicy.REQUIRE,
        service = {})
@Designate(ocd = DiskConfigComponent.Config.class, factory = true)
public final class DiskConfigComponent {

    private static final Logger LOG = System.getLogger(DiskConfigComponent.class.getName());

    @ObjectClassDefinition(id = DiskConfig.FACTORY_PID, name = "Kickplug disk",
            description = "A virtio-blk disk attached from configuration (one configuration per disk)")
    public @interface Config {
        @AttributeDefinition(description = "Unique disk name: letters, digits, '.', '_' or '-'")
        String name();

        @AttributeDefinition(description = "Backend", options = {
            @org.osgi.service.metatype.annotations.Option(label = "raw image file", value = "file"),
            @org.osgi.service.metatype.annotations.Option(label = "memory", value = "memory"),
            @org.osgi.service.metatype.annotations.Option(label = "null (no storage; QEMU null-co)", value = "null"),
            @org.osgi.service.metatype.annotations.Option(label = "NBD client (the backend-nbd bundle)", value = "nbd"),
            @org.osgi.service.metatype.annotations.Option(label = "Ceph RBD image (the backend-rbd bundle)",
                    value = "rbd")})
        String backend() default "memory";

        @AttributeDefinition(required = false, description = "Image file of the file backend")
        String file() default "";

        @AttributeDefinition(required = false, description = "nbd backend: nbd://host[:port]/export or "
                + "nbd+unix:///export?socket=PATH (no TLS)")
        String uri() default "";

        @AttributeDefinition(required = false, description = "rbd backend: the pool of the image (QEMU rbd's pool)")
        String pool() default "";

        @AttributeDefinition(required = false, description = "rbd backend: the RADOS namespace in the pool; empty "
                + "for the default one")
        String namespace() default "";

        @AttributeDefinition(required = false, description = "rbd backend: the image")
        String image() default "";

        @AttributeDefinition(required = false, description = "rbd backend: a snapshot of the image, served "
                + "read-only; empty for the image itself")
        String snapshot() default "";

        @AttributeDefinition(required = false, description = "rbd backend: the Ceph configuration file; empty for "
                + "librados's default ($CEPH_CONF, /etc/ceph/ceph.conf)")
        String conf() default "";

        @AttributeDefinition(required = false, description = "rbd backend: the Ceph client id without 'client.' "
                + "(QEMU rbd's user); empty for admin")
        String user() default "";

        @AttributeDefinition(required = false, description = "rbd backend: the keyring file; empty for the "
                + "configuration's")
        String keyring() default "";

        @AttributeDefinition(required = false,
                description = "Size in bytes with an optional K, M, G or T suffix (file: empty for the file's size); "
                        + "kp:resize writes the new size here, and a change resizes the running disk")
        String size() default "";

        @AttributeDefinition(description = "Refuse writes (VIRTIO_BLK_F_RO)")
        boolean readonly() default false;

        @AttributeDefinition(description = "Bypass the host page cache (O_DIRECT) where the backend can")
        boolean direct() default false;

        @AttributeDefinition(description = "Null backend only: reads fill the buffers with zeroes (QEMU null-co's "
                + "read-zeroes; off: reads move no data)")
        boolean read_zeroes() default false;

        @AttributeDefinition(description = "Null backend only: completion delay of every request in ns (QEMU "
                + "null-co's latency-ns; the requests in their delay wait on the worker pool)", min = "0",
                max = "1000000000")
        long latency_ns() default 0;

        @AttributeDefinition(description = "Number of virtqueues", min = "1", max = "64")
        int queues() default 1;

        @AttributeDefinition(description = "Virtqueue size, a power of two", min = "2", max = "32768")
        int queue_size() default DiskSpec.DEFAULT_QUEUE_SIZE;

        @AttributeDefinition(description = "I/O threads serving the queues", min = "1", max = "64")
        int iothreads() default 1;

        @AttributeDefinition(required = false,
                description = "Queues of each I/O thread, e.g. '0,2;1,3'; empty for round-robin")
        String mapping() default "";

        @AttributeDefinition(description = "Transport the simulated guest drives the disk through (an export to "
                + "another process is an io.kickplug.vhost.export configuration)", options = {
                    @org.osgi.service.metatype.annotations.Option(label = "virtio-mmio (VIRTIO 1.2 section 4.2)",
                            value = "mmio"),
                    @org.osgi.service.metatype.annotations.Option(label = "virtio-pci modern with MSI-X (section 4.1)",
                            value = "pci")})
        String transport() default "mmio";

        @AttributeDefinition(description = "Virtqueue format offered to the guest (VIRTIO 1.2 sections 2.7, 2.8); "
                + "kp:ring writes it here, and a change swaps it on the running disk (a device reset)",
                options = {
                    @org.osgi.service.metatype.annotations.Option(label = "split", value = "split"),
                    @org.osgi.service.metatype.annotations.Option(label = "packed (VIRTIO_F_RING_PACKED)",
                            value = "packed")})
        String ring() default "split";

        @AttributeDefinition(description = "When split rings publish avail_event with EVENT_IDX (VIRTIO 1.2 section "
                + "2.7.10)", options = {
                    @org.osgi.service.metatype.annotations.Option(label = "enable (as Linux vhost)", value = "enable"),
                    @org.osgi.service.metatype.annotations.Option(label = "pop (as QEMU 2014's virtio-blk)", value = "pop")})
        String avail_event() default "enable";

        @AttributeDefinition(required = false, description = "GET_ID answer, at most 20 bytes")
        String serial() default "";

        @AttributeDefinition(description = "Lock of the tracked-requests list; kp:tracked-lock writes it here, and a "
                + "change switches it on the running disk (no reset)", options = {
            @org.osgi.service.metatype.annotations.Option(label = "yielding (CoMutex-like)", value = "yielding"),
            @org.osgi.service.metatype.annotations.Option(label = "mutex", value = "mutex"),
            @org.osgi.service.metatype.annotations.Option(label = "sharded (per I/O thread)", value = "sharded")})
        String tracked_lock() default "mutex";

        @AttributeDefinition(description = "Worker threads for a blocking (file) backend", min = "1", max = "256")
        int workers() default DiskSpec.DEFAULT_WORKERS;

        @AttributeDefinition(required = false, description = "Completion-notification strategy of every queue "
                + "(immediate, bh, defer-call, ...; empty for immediate); kp:notify writes it here, and a change "
                + "swaps it on the running disk")
        String notify_strategy() default "";

        @AttributeDefinition(required = false, description = "Per-queue exceptions to notify.strategy, "
                + "QUEUE=STRATEGY separated by commas, e.g. '1=defer-call,3=bh' (kp:notify --queue N writes them "
                + "here); a queue past the disk's own is one of its vhost-user export's")
        String notify_queues() default "";

        @AttributeDefinition(description = "Device-side polling: the I/O threads poll the queues with the "
                + "driver's notifications off (needs the poll-extension bundle's adaptive policy); kp:poll writes "
                + "it here")
        boolean poll() default false;

        @AttributeDefinition(description = "Longest poll window in ns (QEMU's poll-max-ns); kp:poll --poll-max-ns "
                + "writes it here", min = "0", max = "1000000000")
        long poll_max_ns() default io.kickplug.api.poll.PollParams.DEFAULT_MAX_NS;

        @AttributeDefinition(description = "Factor by which a poll window grows (QEMU's poll-grow); 0 for QEMU's "
                + "default, 2", min = "0", max = "1024")
        long poll_grow() default 0;

        @AttributeDefinition(description = "Divisor by which a poll window shrinks (QEMU's poll-shrink); 0 resets "
                + "it to 0", min = "0", max = "1024")
        long poll_shrink() default 0;
    }

    private final DiskManager disks;
    private final NotificationControl notification;
    private String attached;
    /** The disk waiting for its backend kind's factory (not attached yet), or null. */
    private String waiting;
    /** The properties last seen, without the throttle bundle's {@code throttle.*}. */
    private Map<String, Object> lastProps;
    /** The properties the attached disk was made from, without its {@link DiskSettings}: a change re-attaches. */
    private Map<String, Object> attachedBase;

    @Activate
    public DiskConfigComponent(@Reference(name = "diskManager") DiskManager disks,
            @Reference(name = "notificationControl") NotificationControl notification, Map<String, Object> props) {
        this.disks = disks;
        this.notification = notification;
        lastProps = withoutThrottle(props);
        attach(props);
    }

    /** Without a notification control: {@code notify.strategy} is then ignored with a log line. */
    DiskConfigComponent(DiskManager disks, Map<String, Object> props) {
        this(disks, null, props);
    }

    @Modified
    synchronized void modified(Map<String, Object> props) {
        Map<String, Object> before = lastProps;
        lastProps = withoutThrottle(props);
        if (attached != null && lastProps.equals(before)) {
            return; // only throttle.* changed: the throttle bundle applied it already (kp:throttle)
        }
        if (attached != null && DiskSettings.base(props).equals(attachedBase)) {
            try {
                DiskSettings.of(props); // a malformed setting is logged, and the disk stays as it is
            } catch (DiskException e) {
                LOG.log(Level.ERROR, "disk " + attached + ": configuration not applied: " + e.getMessage());
                return;
            }
            applySettings(attached, props);
            return;
        }
        detach();
        attach(props);
    }

    /** ComponentConstants.DEACTIVATION_REASON_DISABLED and _CONFIGURATION_DELETED (Declarative Services 1.1). */
    private static final int REASON_DISABLED = 1;
    private static final int REASON_CONFIGURATION_DELETED = 4;

    /**
     * Detaches only when the configuration is deleted or the component disabled; a missing manager or a
     * stopping bundle leaves the disk to the manager's quiesce, to be rebuilt when it returns.
     */
    @Deactivate
    synchronized void deactivated(int reason) {
        cancelWaiting();
        if (reason == REASON_CONFIGURATION_DELETED) {
            detach(true);
        } else if (reason == REASON_DISABLED) {
            detach();
        } else {
            attached = null;
            attachedBase = null;
        }
    }

    synchronized void deactivate() {
        detach();
    }

    private synchronized void attach(Map<String, Object> props) {
        DiskSpec spec = null;
        try {
            spec = DiskConfig.toSpec(props);
            DiskSettings.of(props); // checked before anything is attached
            String name = spec.name();
            if (disks.list().stream().anyMatch(d -> d.name().equals(name))) {
                // kp:attach attached it, then wrote this configuration: adopt it (with the settings written since).
                applySettings(name, props);
            } else if (disks instanceof DiskRebuilder rebuilder) {
                rebuilder.rebuild(spec, props); // with its settings
            } else {
                disks.attach(spec);
                applySettings(name, props);
            }
            attached = spec.name();
            attachedBase = DiskSettings.base(props);
        } catch (DiskException e) {
            if (spec != null && disks instanceof DiskRebuilder rebuilder
                    && rebuilder.waitForBackend(spec, () -> retry(props))) {
                waiting = spec.name();
                LOG.log(Level.INFO, "disk " + spec.name() + ": waiting for a '" + spec.backend().kind()
                        + "' backend factory (its bundle is not active yet): " + e.getMessage());
                return;
            }
            LOG.log(Level.ERROR, "disk configuration " + props.get("service.pid") + " not attached: " + e.getMessage());
        }
    }

    /** A factory of the backend kind arrived: attach, unless this configuration moved on meanwhile. */
    private synchronized void retry(Map<String, Object> props) {
        if (waiting != null && waiting.equals(String.valueOf(props.get("name")).trim()) && attached == null) {
            waiting = null;
            attach(props);
        }
    }

    private void cancelWaiting() {
        String name = waiting;
        waiting = null;
        if (name != null && disks instanceof DiskRebuilder rebuilder) {
            rebuilder.cancelWait(name);
        }
    }

    /**
     * Brings the running disk to the configuration's {@link DiskSettings}: the disk manager does it under its
     * monitor, where it writes them ({@link DiskRebuilder#applyConfigured}). Another {@link DiskManager} (tests)
     * gets the strategies and polling through its services.
     */
    private void applySettings(String disk, Map<String, Object> props) {
        if (disks instanceof DiskRebuilder rebuilder) {
            rebuilder.applyConfigured(disk, props);
            return;
        }
        try {
            DiskSettings settings = DiskSettings.of(props);
            if (notification == null) {
                LOG.log(Level.WARNING, "disk " + disk + ": no notification control, '" + DiskConfig.NOTIFY_STRATEGY
                        + "' ignored");
            } else {
                notification.setStrategy(disk, settings.strategies().all(), NotificationControl.ALL_QUEUES);
                settings.strategies().perQueue().forEach((q, s) -> notification.setStrategy(disk, s, q));
            }
            disks.setPolling(disk, settings.poll(), settings.pollParams());
        } catch (DiskException e) {
            LOG.log(Level.ERROR, "disk " + disk + ": settings not applied: " + e.getMessage());
        }
    }

    /** Without the throttle bundle's settings (throttle.group, throttle.iops-total, ...): it applies them live. */
    private static Map<String, Object> withoutThrottle(Map<String, Object> props) {
        Map<String, Object> rest = new HashMap<>(props);
        rest.keySet().removeIf(k -> k.startsWith("throttle."));
        return rest;
    }

    private void detach() {
        detach(false);
    }

    /** {@code deleted}: the configuration was deleted (not changed), so a newer disk of that name may exist. */
    private void detach(boolean deleted) {
        cancelWaiting();
        String name = attached;
        attached = null;
        attachedBase = null;
        if (name != null) {
            try {
                if (disks instanceof DiskRebuilder rebuilder) {
                    // the configuration is gone or changing: not DiskManager.detach
                    if (deleted) {
                        rebuilder.releaseDeleted(name);
                    } else {
                        rebuilder.release(name);
                    }
                    return;
                }
                disks.detach(name);
            } catch (DiskException e) {
                LOG.log(Level.WARNING, "disk " + name + " from configuration: " + e.getMessage());
            }
        }
    }
}
