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
 * the configuration changes, detached when it is deleted. A change of {@code notify.strategy} alone is
 * applied to the running disk (a hot swap, no re-attach). A bad configuration logs one line and leaves
 * nothing attached.
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
            @org.osgi.service.metatype.annotations.Option(label = "NBD client (the backend-nbd bundle)", value = "nbd")})
        String backend() default "memory";

        @AttributeDefinition(required = false, description = "Image file of the file backend")
        String file() default "";

        @AttributeDefinition(required = false, description = "nbd backend: nbd://host[:port]/export or "
                + "nbd+unix:///export?socket=PATH (no TLS)")
        String uri() default "";

        @AttributeDefinition(required = false,
                description = "Size in bytes with an optional K, M, G or T suffix (file: empty for the file's size)")
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

        @AttributeDefinition(description = "Virtqueue format offered to the guest (VIRTIO 1.2 sections 2.7, 2.8)",
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

        @AttributeDefinition(description = "Lock of the tracked-requests list", options = {
            @org.osgi.service.metatype.annotations.Option(label = "yielding (CoMutex-like)", value = "yielding"),
            @org.osgi.service.metatype.annotations.Option(label = "mutex", value = "mutex"),
            @org.osgi.service.metatype.annotations.Option(label = "sharded (per I/O thread)", value = "sharded")})
        String tracked_lock() default "mutex";

        @AttributeDefinition(description = "Worker threads for a blocking (file) backend", min = "1", max = "256")
        int workers() default DiskSpec.DEFAULT_WORKERS;

        @AttributeDefinition(required = false, description = "Completion-notification strategy of every queue "
                + "(immediate, bh, defer-call, ...; empty for immediate); changing only this swaps it live")
        String notify_strategy() default "";

        @AttributeDefinition(description = "Device-side polling: the I/O threads poll the queues with the "
                + "driver's notifications off (needs the poll-extension bundle's adaptive policy)")
        boolean poll() default false;

        @AttributeDefinition(description = "Longest poll window in ns (QEMU's poll-max-ns)", min = "0",
                max = "1000000000")
        long poll_max_ns() default io.kickplug.api.poll.PollParams.DEFAULT_MAX_NS;
    }

    private final DiskManager disks;
    private final NotificationControl notification;
    private String attached;
    /** The disk waiting for its backend kind's factory (not attached yet), or null. */
    private String waiting;
    /** The properties last seen, without the throttle bundle's {@code throttle.*}. */
    private Map<String, Object> lastProps;
    /** The properties the attached disk was made from, without {@link DiskConfig#NOTIFY_STRATEGY}. */
    private Map<String, Object> attachedProps;

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
        if (attached != null && withoutStrategy(props).equals(attachedProps)) {
            applyStrategy(attached, props);
            applyPolling(attached, props, true);
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
            attachedProps = null;
        }
    }

    synchronized void deactivate() {
        detach();
    }

    private synchronized void attach(Map<String, Object> props) {
        DiskSpec spec = null;
        try {
            spec = DiskConfig.toSpec(props);
            DiskConfig.notifyStrategy(props); // checked before anything is attached
            DiskConfig.polling(props); // checked before anything is attached
            String name = spec.name();
            if (disks.list().stream().anyMatch(d -> d.name().equals(name))) {
                // kp:attach attached it, then wrote this configuration: adopt it.
                attached = spec.name();
                attachedProps = withoutStrategy(props);
                return;
            }
            if (disks instanceof DiskRebuilder rebuilder) {
                rebuilder.rebuild(spec);
            } else {
                disks.attach(spec);
            }
            attached = spec.name();
            attachedProps = withoutStrategy(props);
            applyStrategy(spec.name(), props);
            applyPolling(spec.name(), props, false);
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

    private void applyStrategy(String disk, Map<String, Object> props) {
        try {
            String strategy = DiskConfig.notifyStrategy(props);
            if (notification == null) {
                LOG.log(Level.WARNING, "disk " + disk + ": no notification control, '" + DiskConfig.NOTIFY_STRATEGY
                        + "' ignored");
                return;
            }
            notification.setStrategy(disk, strategy, NotificationControl.ALL_QUEUES);
        } catch (DiskException e) {
            LOG.log(Level.ERROR, "disk " + disk + ": '" + DiskConfig.NOTIFY_STRATEGY + "' not applied: "
                    + e.getMessage());
        }
    }

    /** {@code poll} and {@code poll.max.ns}; {@code always} also sends "off" (a live change). */
    private void applyPolling(String disk, Map<String, Object> props, boolean always) {
        try {
            DiskConfig.Polling polling = DiskConfig.polling(props);
            if (polling.enabled() || always) {
                disks.setPolling(disk, polling.enabled(), polling.params());
            }
        } catch (DiskException e) {
            LOG.log(Level.ERROR, "disk " + disk + ": polling not applied: " + e.getMessage());
        }
    }

    /**
     * The properties whose change needs a re-attach: all but the strategy and polling, which apply live, and the
     * throttle bundle's {@code throttle.*}, which it applies itself.
     */
    private static Map<String, Object> withoutStrategy(Map<String, Object> props) {
        Map<String, Object> rest = new HashMap<>(props);
        rest.remove(DiskConfig.NOTIFY_STRATEGY);
        rest.remove("notify_strategy");
        rest.remove("poll");
        rest.remove("poll.max.ns");
        rest.remove("poll_max_ns");
        return withoutThrottle(rest);
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
        attachedProps = null;
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
