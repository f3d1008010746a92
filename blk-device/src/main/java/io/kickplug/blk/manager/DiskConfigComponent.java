package io.kickplug.blk.manager;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
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
 * the configuration changes, detached when it is deleted. A bad configuration logs one line and leaves
 * nothing attached.
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
            @org.osgi.service.metatype.annotations.Option(label = "null (reads zeroes)", value = "null")})
        String backend() default "memory";

        @AttributeDefinition(required = false, description = "Image file of the file backend")
        String file() default "";

        @AttributeDefinition(required = false,
                description = "Size in bytes with an optional K, M, G or T suffix (file: empty for the file's size)")
        String size() default "";

        @AttributeDefinition(description = "Refuse writes (VIRTIO_BLK_F_RO)")
        boolean readonly() default false;

        @AttributeDefinition(description = "Bypass the host page cache (O_DIRECT) where the backend can")
        boolean direct() default false;

        @AttributeDefinition(description = "Number of virtqueues", min = "1", max = "64")
        int queues() default 1;

        @AttributeDefinition(description = "Virtqueue size, a power of two", min = "2", max = "32768")
        int queue_size() default DiskSpec.DEFAULT_QUEUE_SIZE;

        @AttributeDefinition(description = "I/O threads serving the queues", min = "1", max = "64")
        int iothreads() default 1;

        @AttributeDefinition(required = false,
                description = "Queues of each I/O thread, e.g. '0,2;1,3'; empty for round-robin")
        String mapping() default "";

        @AttributeDefinition(description = "Transport")
        String transport() default "mmio";

        @AttributeDefinition(required = false, description = "GET_ID answer, at most 20 bytes")
        String serial() default "";

        @AttributeDefinition(description = "Lock of the tracked-requests list", options = {
            @org.osgi.service.metatype.annotations.Option(label = "yielding (CoMutex-like)", value = "yielding"),
            @org.osgi.service.metatype.annotations.Option(label = "mutex", value = "mutex"),
            @org.osgi.service.metatype.annotations.Option(label = "sharded (per I/O thread)", value = "sharded")})
        String tracked_lock() default "mutex";

        @AttributeDefinition(description = "Worker threads for a blocking (file) backend", min = "1", max = "256")
        int workers() default DiskSpec.DEFAULT_WORKERS;

        @AttributeDefinition(description = "Device-side polling: the I/O threads poll the queues with the "
                + "driver's notifications off (needs the poll-extension bundle's adaptive policy)")
        boolean poll() default false;

        @AttributeDefinition(description = "Longest poll window in ns (QEMU's poll-max-ns)", min = "0",
                max = "1000000000")
        long poll_max_ns() default io.kickplug.api.poll.PollParams.DEFAULT_MAX_NS;
    }

    private final DiskManager disks;
    private String attached;

    @Activate
    public DiskConfigComponent(@Reference(name = "diskManager") DiskManager disks, Map<String, Object> props) {
        this.disks = disks;
        attach(props);
    }

    @Modified
    synchronized void modified(Map<String, Object> props) {
        detach();
        attach(props);
    }

    @Deactivate
    synchronized void deactivate() {
        detach();
    }

    private synchronized void attach(Map<String, Object> props) {
        try {
            DiskSpec spec = DiskConfig.toSpec(props);
            DiskConfig.Polling polling = DiskConfig.polling(props);
            disks.attach(spec);
            attached = spec.name();
            if (polling.enabled()) {
                try {
                    disks.setPolling(spec.name(), true, polling.params());
                } catch (DiskException e) {
                    LOG.log(Level.ERROR, "disk " + spec.name() + " attached without polling: " + e.getMessage());
                }
            }
        } catch (DiskException e) {
            LOG.log(Level.ERROR, "disk configuration " + props.get("service.pid") + " not attached: " + e.getMessage());
        }
    }

    private void detach() {
        String name = attached;
        attached = null;
        if (name != null) {
            try {
                disks.detach(name);
            } catch (DiskException e) {
                LOG.log(Level.WARNING, "disk " + name + " from configuration: " + e.getMessage());
            }
        }
    }
}
