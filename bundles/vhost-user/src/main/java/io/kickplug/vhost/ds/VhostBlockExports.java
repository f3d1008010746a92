package io.kickplug.vhost.ds;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.control.BlockExports;
import io.kickplug.vhost.server.InheritedSocket;
import io.kickplug.vhost.server.VhostUserServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The vhost-user exports as {@link BlockExports} ({@code vhost-user-blk}), for the QMP monitor's block-export-add:
 * made, saved and stopped through {@link VhostCommands} exactly as {@code kp:vhost} and {@code kp:vhost-stop} do.
 */
@Component(service = BlockExports.class, property = BlockExports.TYPE + "=vhost-user-blk")
public final class VhostBlockExports implements BlockExports {

    private final VhostCommands commands;
    private final DiskManager disks;

    @Activate
    public VhostBlockExports(@Reference(name = "commands") VhostCommands commands,
            @Reference(name = "diskManager") DiskManager disks) {
        this.commands = commands;
        this.disks = disks;
    }

    @Override
    public Export add(String disk, boolean writable, Map<String, String> options) {
        String socket = null;
        String fd = null;
        int queues = 1;
        for (Map.Entry<String, String> o : options.entrySet()) {
            switch (o.getKey()) {
                case "socket" -> socket = o.getValue();
                case "fd" -> fd = o.getValue();
                case "queues" -> queues = queues(o.getValue());
                default -> throw new IllegalArgumentException("unknown vhost-user-blk export option '" + o.getKey()
                        + "' (socket, fd, queues)");
            }
        }
        if ((socket == null || socket.isEmpty()) == (fd == null || fd.isEmpty())) {
            throw new IllegalArgumentException("a vhost-user-blk export needs a socket or an inherited descriptor");
        }
        DiskInfo info = disks.info(disk);
        // The device's read-only bit (VIRTIO_BLK_F_RO, VIRTIO 1.2 section 5.2.3) is the disk's: an export cannot
        // hide writes of a writable disk, nor offer them on a read-only one.
        if (writable && info.readOnly()) {
            throw new DiskException("disk '" + disk + "' is read-only: it cannot be exported writable");
        }
        if (!writable && !info.readOnly()) {
            throw new DiskException("disk '" + disk + "' is writable: a vhost-user-blk export of it is writable "
                    + "(export it writable, or make the disk read-only)");
        }
        if (fd != null && !fd.isEmpty()) {
            return export(commands.exportSavedInherited(disk,
                    InheritedSocket.resolve(fd, System.getenv(), ProcessHandle.current().pid()), queues), writable);
        }
        return export(commands.exportSaved(disk, Path.of(socket), queues), writable);
    }

    private static int queues(String text) {
        try {
            int n = Integer.parseInt(text);
            if (n >= 1 && n <= DiskSpec.MAX_QUEUES) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException("queues '" + text + "': expected 1 to " + DiskSpec.MAX_QUEUES);
    }

    @Override
    public void delete(String key) {
        commands.stopSaved(key);
    }

    @Override
    public List<Export> list() {
        List<Export> out = new ArrayList<>();
        for (VhostUserServer.Status s : commands.statuses()) {
            boolean readOnly;
            try {
                readOnly = disks.info(s.name()).readOnly();
            } catch (RuntimeException e) {
                readOnly = false;
            }
            out.add(export(s, !readOnly));
        }
        return out;
    }

    private static Export export(VhostUserServer.Status s, boolean writable) {
        return new Export(s.name(), s.name(), writable, s.socket().toString(),
                s.state().name().toLowerCase(Locale.ROOT));
    }
}
