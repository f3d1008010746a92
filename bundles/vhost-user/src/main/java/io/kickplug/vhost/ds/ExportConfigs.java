package io.kickplug.vhost.ds;

import io.kickplug.api.blk.DiskSpec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The vhost-user exports as ConfigAdmin factory configurations ({@value #FACTORY_PID}: {@code disk},
 * {@code socket}, {@code queues}, and {@code fd} for an inherited socket), so that an export outlives the bundles serving it: when the disk manager,
 * the virtqueue factory or this bundle goes, the exports end (front-ends disconnected, sockets removed); when
 * they return, the exports are made again on the same sockets and QEMU (with {@code reconnect=}) comes back,
 * resubmitting through its inflight area. Created with location {@code "?"} for every version of the bundle.
 */
final class ExportConfigs {

    static final String FACTORY_PID = "io.kickplug.vhost.export";

    /**
     * The properties of one export, for the metatype (and docs/reference/configuration.md): {@link VhostCommands}
     * designates it, though it reads the configurations itself ({@link #list}) rather than through SCR.
     */
    @ObjectClassDefinition(id = FACTORY_PID, name = "Kickplug vhost-user export",
            description = "A disk exported over vhost-user on a Unix socket (one configuration per export; "
                    + "kp:vhost writes it, kp:vhost-stop deletes it); made again whenever the vhost-user bundle "
                    + "starts and the disk is attached")
    @interface Config {
        @AttributeDefinition(description = "Name of the exported disk (an attached disk, e.g. from an "
                + "io.kickplug.disk configuration)")
        String disk();

        @AttributeDefinition(description = "Unix socket the export listens on, for the front-end (QEMU's "
                + "vhost-user-blk-pci chardev); fd:N for an inherited socket")
        String socket();

        @AttributeDefinition(description = "Descriptor of a listening Unix socket the process inherited (QEMU's "
                + "addr.type=fd; systemd's socket activation), served instead of a socket file; -1: none", min = "-1")
        int fd() default -1;

        @AttributeDefinition(description = "Virtqueues the front-end may use", min = "1",
                max = "" + DiskSpec.MAX_QUEUES)
        int queues() default 1;
    }

    /** One saved export. */
    record Saved(String disk, String socket, int queues, int fd) {
    }

    private ExportConfigs() {
    }

    static void save(ConfigurationAdmin admin, String disk, String socket, int queues, int fd) throws IOException {
        delete(admin, disk);
        Configuration c = admin.getFactoryConfiguration(FACTORY_PID, disk, "?");
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("disk", disk);
        props.put("socket", socket);
        props.put("queues", queues);
        if (fd >= 0) {
            props.put("fd", fd);
        }
        c.update(props);
    }

    static void delete(ConfigurationAdmin admin, String disk) throws IOException {
        for (Configuration c : all(admin)) {
            Dictionary<String, Object> p = c.getProperties();
            if (p != null && disk.equals(String.valueOf(p.get("disk")))) {
                c.delete();
            }
        }
    }

    static List<Saved> list(ConfigurationAdmin admin) throws IOException {
        List<Saved> out = new ArrayList<>();
        for (Configuration c : all(admin)) {
            Dictionary<String, Object> p = c.getProperties();
            if (p == null || p.get("disk") == null || p.get("socket") == null) {
                continue;
            }
            int queues;
            try {
                queues = Integer.parseInt(String.valueOf(p.get("queues")));
            } catch (NumberFormatException e) {
                queues = 1;
            }
            int fd;
            try {
                fd = p.get("fd") == null ? -1 : Integer.parseInt(String.valueOf(p.get("fd")));
            } catch (NumberFormatException e) {
                fd = -1;
            }
            out.add(new Saved(String.valueOf(p.get("disk")), String.valueOf(p.get("socket")), queues, fd));
        }
        return out;
    }

    private static List<Configuration> all(ConfigurationAdmin admin) throws IOException {
        try {
            Configuration[] found = admin.listConfigurations("(service.factoryPid=" + FACTORY_PID + ")");
            return found == null ? List.of() : List.of(found);
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException("constant filter is invalid", e);
        }
    }
}
