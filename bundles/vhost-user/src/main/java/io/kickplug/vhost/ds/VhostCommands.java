package io.kickplug.vhost.ds;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.transport.ExportStatus;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.vhost.server.StatusTable;
import io.kickplug.vhost.server.VhostExports;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Function;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;

/**
 * The vhost-user exports and their Gogo commands: {@code kp:vhost <disk> --socket PATH [--queues N]},
 * {@code kp:vhost-stop <disk>} and {@code kp:vhost-list}. Gogo cannot map a hyphenated command to a Java
 * method, so each command is a {@link Function}: this component is {@code kp:vhost} (declared in its DS
 * properties, so the launcher waits for it before running a script), and registers the other two when it
 * activates (immediately). Stopping the component stops every export (the front-ends are disconnected, the
 * devices reset, the sockets removed).
 */
@Component(service = Function.class, immediate = true, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=vhost",
})
public final class VhostCommands implements Function {

    static final String USAGE = "usage: kp:vhost <disk> --socket PATH [--queues N] [--json]";

    private final VhostExports exports;
    private final List<ServiceRegistration<?>> registrations = new ArrayList<>();

    @Activate
    public VhostCommands(BundleContext context, @Reference(name = "diskManager") DiskManager disks,
            @Reference(name = "virtqueueFactory") VirtqueueFactory queues,
            @Reference(name = "guestMemoryFactory") GuestMemoryFactory memory) {
        this.exports = new VhostExports(disks, queues, memory);
        register(context, "vhost-stop", (session, args) -> stop(exports, strings(args)));
        register(context, "vhost-list", (session, args) -> list(exports, strings(args)));
        // For kp:disks, without the shell depending on this bundle.
        registrations.add(context.registerService(ExportStatus.class, exports::exportStatus, null));
    }

    /** {@code kp:vhost}. */
    @Override
    public Object execute(CommandSession session, List<Object> arguments) {
        return vhost(exports, strings(arguments));
    }

    private void register(BundleContext context, String function, Function f) {
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("osgi.command.scope", "kp");
        props.put("osgi.command.function", function);
        registrations.add(context.registerService(Function.class, f, props));
    }

    @Deactivate
    void deactivate() {
        registrations.forEach(r -> {
            try {
                r.unregister();
            } catch (IllegalStateException e) {
                // already gone with the bundle
            }
        });
        exports.close();
    }

    private static List<String> strings(List<Object> args) {
        List<String> out = new ArrayList<>();
        for (Object a : args) {
            out.add(String.valueOf(a));
        }
        return out;
    }

    /** {@code kp:vhost <disk> --socket PATH [--queues N]}. */
    static String vhost(VhostExports exports, List<String> args) {
        String disk = null;
        String socket = null;
        int queues = 1;
        boolean json = false;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            switch (a) {
                case "--socket" -> socket = value(args, ++i, a);
                case "--json" -> json = true;
                case "--queues" -> {
                    String v = value(args, ++i, a);
                    try {
                        queues = Integer.parseInt(v);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--queues " + v + " is not a number; " + USAGE);
                    }
                }
                default -> {
                    if (a.startsWith("-")) {
                        throw new IllegalArgumentException("unknown option " + a + "; " + USAGE);
                    }
                    if (disk != null) {
                        throw new IllegalArgumentException("one disk per export; " + USAGE);
                    }
                    disk = a;
                }
            }
        }
        if (disk == null || socket == null) {
            throw new IllegalArgumentException(USAGE);
        }
        exports.export(disk, Path.of(socket), queues);
        String name = disk;
        List<io.kickplug.vhost.server.VhostUserServer.Status> status = exports.list().stream()
                .filter(s -> s.name().equals(name)).toList();
        return json ? StatusTable.json(status) : StatusTable.format(status);
    }

    private static String value(List<String> args, int i, String option) {
        if (i >= args.size()) {
            throw new IllegalArgumentException(option + " needs a value; " + USAGE);
        }
        return args.get(i);
    }

    /** {@code kp:vhost-list [--json]}. */
    static String list(VhostExports exports, List<String> args) {
        if (args.equals(List.of("--json"))) {
            return StatusTable.json(exports.list());
        }
        if (!args.isEmpty()) {
            throw new IllegalArgumentException("usage: kp:vhost-list [--json]");
        }
        return StatusTable.format(exports.list());
    }

    /** {@code kp:vhost-stop <disk>}. */
    static String stop(VhostExports exports, List<String> args) {
        boolean json = args.size() == 2 && args.get(0).equals("--json");
        List<String> rest = json ? args.subList(1, 2) : args;
        if (rest.size() != 1 || rest.get(0).startsWith("-")) {
            throw new IllegalArgumentException("usage: kp:vhost-stop [--json] <disk>");
        }
        exports.stop(rest.get(0));
        return json ? "{\"stopped\":" + StatusTable.quote(rest.get(0)) + "}"
                : "stopped the vhost-user export of " + rest.get(0);
    }
}
