package io.kickplug.vhost.ds;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.guest.OptionArgs;
import io.kickplug.api.text.JsonText;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.transport.ExportStatus;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.vhost.server.InheritedSocket;
import io.kickplug.vhost.server.PendingMarks;
import io.kickplug.vhost.server.StatusTable;
import io.kickplug.vhost.server.VhostExports;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Function;
import org.apache.felix.service.command.Parameter;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;

/**
 * The vhost-user exports and the Gogo command {@code kp:vhost <disk> --socket PATH [--queues N]}; its companions
 * {@code kp:vhost-stop <disk>} ({@link VhostStopCommand}) and {@code kp:vhost-list} ({@link VhostListCommand}) are
 * components of their own (a hyphenated name is a Gogo {@code _main} method) that call this one. Every command is
 * declared in DS properties, so the launcher waits for them before running a script. Stopping this component stops
 * every export (the front-ends are disconnected, the devices reset, the sockets removed).
 *
 * <p>For callers outside Gogo (kp:bench's real-guest seeds), the export and its stop are also {@link Function}
 * services with the property {@value #CALL} ({@code vhost} and {@code vhost-stop}), taking the arguments a user
 * types; they are no Gogo commands.
 *
 * <p>Exports are also ConfigAdmin configurations ({@link ExportConfigs}): when this component comes back
 * (its bundle, the disk manager or the virtqueue factory returned after an update) it makes them again, on
 * the same sockets, as soon as their disks are attached again; {@code kp:vhost-stop} deletes the configuration.
 */
@Component(service = VhostCommands.class, immediate = true, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=vhost",
}, configurationPid = ExportConfigs.FACTORY_PID, configurationPolicy = ConfigurationPolicy.IGNORE)
// The export configurations' metatype; SCR ignores them for this component, which reads them itself (ExportConfigs).
@Designate(ocd = ExportConfigs.Config.class, factory = true)
public final class VhostCommands {

    /**
     * The service property of the {@link Function}s that export a disk ({@code vhost}) and stop an export
     * ({@code vhost-stop}) for callers outside Gogo.
     */
    public static final String CALL = "kickplug.vhost.call";
    /** The {@code @Descriptor} of the commands' {@code --json} flag. */
    static final String JSON = "JSON instead of text (shape in docs/reference/json.md)";
    static final String USAGE = "usage: kp:vhost <disk> --socket PATH|--fd N [--queues N] [--json]";

    private static final System.Logger LOG = System.getLogger(VhostCommands.class.getName());
    /** How long a saved export waits for its disk to be attached again. */
    private static final long RESTORE_WAIT_MILLIS = 30_000;

    /**
     * The dirty-log marks sessions left uncollected (a bundle update during a live migration), per export: one store
     * for as long as this bundle's classes live, so that exports made again after an update of the disk manager or
     * the rings hand them to their next sessions. An update of this bundle saves them to its data area
     * ({@link #deactivate}), where the next revision loads them.
     */
    private static final PendingMarks PENDING_MARKS = new PendingMarks();
    /** The directory in this bundle's persistent data area that holds the pending marks across its update. */
    static final String PENDING_MARKS_DIR = "pending-dirty-marks";

    private final VhostExports exports;
    /** {@link #PENDING_MARKS_DIR} in the bundle's data area, or {@code null} without one. */
    private final Path marksDir;
    private final List<ServiceRegistration<?>> registrations = new ArrayList<>();
    private final Thread restorer;
    /** Optional (static): without ConfigAdmin, exports do not outlive this component. */
    private final ConfigurationAdmin configAdmin;

    @Activate
    public VhostCommands(BundleContext context, @Reference(name = "diskManager") DiskManager disks,
            @Reference(name = "virtqueueFactory", target = "(!(" + VirtqueueFactory.RING_PROPERTY + "=packed))")
            VirtqueueFactory queues,
            @Reference(name = "packedVirtqueueFactory", target = "(" + VirtqueueFactory.RING_PROPERTY + "=packed)",
                    cardinality = ReferenceCardinality.OPTIONAL, policyOption = ReferencePolicyOption.GREEDY)
            VirtqueueFactory packedQueues,
            @Reference(name = "guestMemoryFactory") GuestMemoryFactory memory,
            @Reference(name = "configurationAdmin", cardinality = ReferenceCardinality.OPTIONAL)
            ConfigurationAdmin configAdmin) {
        java.io.File data = context.getDataFile(PENDING_MARKS_DIR);
        this.marksDir = data == null ? null : data.toPath();
        if (marksDir != null) {
            PENDING_MARKS.load(marksDir); // before any export: what the previous revision (or activation) saved
        } else {
            LOG.log(System.Logger.Level.INFO, "no persistent data area: pending dirty-log marks do not outlive an"
                    + " update of this bundle");
        }
        // Front-ends that ask for the packed ring (QEMU packed=on) get it when its bundle is there.
        this.exports = new VhostExports(disks, RingSelector.of(queues, packedQueues), memory, PENDING_MARKS);
        this.configAdmin = configAdmin;
        register(context, "vhost", (session, args) -> vhost(exports, strings(args), this::remember));
        register(context, "vhost-stop", (session, args) -> stop(strings(args)));
        // For kp:disks, without the shell depending on this bundle.
        registrations.add(context.registerService(ExportStatus.class, new ExportStatus() {
            @Override
            public List<ExportStatus.Export> exports() {
                return exports.exportStatus();
            }

            @Override
            public List<ExportStatus.DirtyLog> dirtyLogs() {
                return exports.dirtyLogs();
            }
        }, null));
        // Saved exports whose disks are attached now come back before this constructor returns; the others
        // (disks being rebuilt by the block-device bundle) as soon as their disks are.
        List<ExportConfigs.Saved> pending = saved();
        restoreAttached(disks, pending);
        if (pending.isEmpty()) {
            restorer = null;
        } else {
            restorer = new Thread(() -> restore(disks, pending), "kp-vhost-restore");
            restorer.setDaemon(true);
            restorer.start();
        }
    }

    /** For tests: the commands over {@code exports}, without ConfigAdmin, services or saved exports. */
    VhostCommands(VhostExports exports) {
        this.exports = exports;
        this.marksDir = null;
        this.configAdmin = null;
        this.restorer = null;
    }

    private List<ExportConfigs.Saved> saved() {
        ConfigurationAdmin admin = configAdmin;
        if (admin == null) {
            return new ArrayList<>();
        }
        try {
            return new ArrayList<>(ExportConfigs.list(admin));
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "cannot read the saved vhost-user exports: " + e);
            return new ArrayList<>();
        }
    }

    /** Exports again those of {@code saved} whose disks are attached now, and removes them from the list. */
    private void restoreAttached(DiskManager disks, List<ExportConfigs.Saved> saved) {
        synchronized (saved) {
            for (var it = saved.iterator(); it.hasNext(); ) {
                ExportConfigs.Saved s = it.next();
                boolean attached;
                try {
                    attached = disks.list().stream().anyMatch(d -> d.name().equals(s.disk()));
                } catch (RuntimeException goingAway) {
                    return;
                }
                if (!attached) {
                    continue;
                }
                it.remove();
                try {
                    if (s.fd() >= 0) {
                        exports.exportInherited(s.disk(), s.fd(), s.queues());
                    } else {
                        exports.export(s.disk(), Path.of(s.socket()), s.queues());
                    }
                    LOG.log(System.Logger.Level.INFO, "vhost-user export of " + s.disk() + " on " + s.socket()
                            + " made again");
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.ERROR, "vhost-user export of " + s.disk() + " on " + s.socket()
                            + " could not be made again: " + e.getMessage());
                }
            }
        }
    }

    /** Makes the rest of the saved exports again once their disks are attached (after a bundle update). */
    private void restore(DiskManager disks, List<ExportConfigs.Saved> saved) {
        long deadline = System.currentTimeMillis() + RESTORE_WAIT_MILLIS;
        try {
            while (!saved.isEmpty() && System.currentTimeMillis() < deadline) {
                restoreAttached(disks, saved);
                if (!saved.isEmpty()) {
                    // The disks come back through ConfigAdmin in another bundle: nothing to wait on but time.
                    Thread.sleep(10);
                }
            }
            for (ExportConfigs.Saved s : saved) {
                LOG.log(System.Logger.Level.ERROR, "vhost-user export of " + s.disk() + ": the disk did not come back "
                        + "within " + RESTORE_WAIT_MILLIS + " ms");
            }
        } catch (InterruptedException e) {
            // deactivated
        }
    }

    private void remember(String disk, String socket, int queues, int fd) {
        ConfigurationAdmin admin = configAdmin;
        if (admin == null) {
            return;
        }
        try {
            ExportConfigs.save(admin, disk, socket, queues, fd);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "vhost-user export of " + disk + " not saved: " + e);
        }
    }

    private void forget(String disk) {
        ConfigurationAdmin admin = configAdmin;
        if (admin == null) {
            return;
        }
        try {
            ExportConfigs.delete(admin, disk);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "vhost-user export of " + disk + ": configuration not deleted: " + e);
        }
    }

    /**
     * {@code kp:vhost}: Gogo takes the options out; the rest (the disk, and any option written as
     * {@code --name=value}) goes to the same parser as a {@link #CALL} caller's arguments.
     */
    @Descriptor("export a disk over vhost-user on a Unix socket, for a front-end such as QEMU's "
            + "vhost-user-blk-pci; the export is saved and made again after a bundle update")
    public String vhost(
            @Descriptor("the Unix socket to listen on (this or --fd is required)")
            @Parameter(names = "--socket", absentValue = "") String socket,
            @Descriptor("serve a listening Unix socket this process inherited instead: its descriptor number, or "
                    + "its name in systemd's LISTEN_FDNAMES")
            @Parameter(names = "--fd", absentValue = "") String fd,
            @Descriptor("virtqueues the front-end may use (default 1)")
            @Parameter(names = "--queues", absentValue = "1") String queues,
            @Descriptor(JSON)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("DISK: the disk to export") String... disk) {
        List<String> args = new ArrayList<>(Arrays.asList(disk));
        if (!socket.isEmpty()) {
            args.addAll(List.of("--socket", socket));
        }
        if (!fd.isEmpty()) {
            args.addAll(List.of("--fd", fd));
        }
        if (!queues.equals("1")) {
            args.addAll(List.of("--queues", queues));
        }
        if (json) {
            args.add("--json");
        }
        return vhost(exports, args, this::remember);
    }

    /** An export made and saved as {@code kp:vhost} makes it, for {@link VhostBlockExports}. */
    io.kickplug.vhost.server.VhostUserServer.Status exportSaved(String disk, Path socket, int queues) {
        io.kickplug.vhost.server.VhostUserServer.Status status = exports.export(disk, socket, queues);
        remember(disk, socket.toString(), queues, -1);
        return status;
    }

    /** An export on inherited descriptor {@code fd}, made and saved as {@code kp:vhost --fd} makes it. */
    io.kickplug.vhost.server.VhostUserServer.Status exportSavedInherited(String disk, int fd, int queues) {
        io.kickplug.vhost.server.VhostUserServer.Status status = exports.exportInherited(disk, fd, queues);
        remember(disk, "fd:" + fd, queues, fd);
        return status;
    }

    /** An export stopped and its configuration deleted, as {@code kp:vhost-stop} does, for {@link VhostBlockExports}. */
    void stopSaved(String disk) {
        exports.stop(disk);
        forget(disk);
    }

    /** The exports now, for {@link VhostBlockExports}. */
    List<io.kickplug.vhost.server.VhostUserServer.Status> statuses() {
        return exports.list();
    }

    /** {@code kp:vhost-stop}: stops the export and deletes its configuration. */
    String stop(List<String> args) {
        String out = stop(exports, args);
        forget(args.stream().filter(a -> !a.startsWith("--")).findFirst().orElseThrow());
        return out;
    }

    /** {@code kp:vhost-list}. */
    String list(List<String> args) {
        return list(exports, args);
    }

    /** Registers {@code f} as the {@link #CALL} {@code call}: a Function for callers outside Gogo, no command. */
    private void register(BundleContext context, String call, Function f) {
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(CALL, call);
        registrations.add(context.registerService(Function.class, f, props));
    }

    @Deactivate
    void deactivate() {
        if (restorer != null) {
            restorer.interrupt();
            try {
                restorer.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        registrations.forEach(r -> {
            try {
                r.unregister();
            } catch (IllegalStateException e) {
                // already gone with the bundle
            }
        });
        exports.close();
        // The sessions ended above: what they left uncollected goes to the data area, for this component's next
        // activation (in memory, too) or the next revision of the bundle (an update: only the file survives).
        if (marksDir != null) {
            PENDING_MARKS.save(marksDir);
        }
    }

    private static List<String> strings(List<Object> args) {
        List<String> out = new ArrayList<>();
        for (Object a : args) {
            out.add(String.valueOf(a));
        }
        return out;
    }

    /** Something told about each export made (its configuration is saved). */
    interface Saver {
        /** {@code fd}: the inherited descriptor served, or -1. */
        void saved(String disk, String socket, int queues, int fd);
    }

    /** {@code kp:vhost <disk> --socket PATH|--fd N [--queues N] [--json]}. */
    static String vhost(VhostExports exports, List<String> args) {
        return vhost(exports, args, (d, s, q, f) -> { });
    }

    static String vhost(VhostExports exports, List<String> args, Saver saver) {
        OptionArgs.Parsed parsed = OptionArgs.parse(args, USAGE, Set.of("--json"));
        String socket = null;
        String fd = null;
        int queues = 1;
        boolean json = false;
        for (Map.Entry<String, String> option : parsed.options().entrySet()) {
            String value = option.getValue();
            switch (option.getKey()) {
                case "--socket" -> socket = value;
                case "--fd" -> fd = value;
                case "--json" -> json = Boolean.parseBoolean(value);
                case "--queues" -> {
                    try {
                        queues = Integer.parseInt(value);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--queues " + value + " is not a number; " + USAGE);
                    }
                }
                default -> throw new IllegalArgumentException("unknown option " + option.getKey() + "; " + USAGE);
            }
        }
        if (parsed.operands().size() > 1) {
            throw new IllegalArgumentException("one disk per export; " + USAGE);
        }
        if (parsed.operands().isEmpty() || (socket == null) == (fd == null)) {
            throw new IllegalArgumentException(socket != null && fd != null
                    ? "--socket and --fd exclude each other; " + USAGE : USAGE);
        }
        String disk = parsed.operands().get(0);
        if (fd != null) {
            int number = InheritedSocket.resolve(fd, System.getenv(), ProcessHandle.current().pid());
            exports.exportInherited(disk, number, queues);
            saver.saved(disk, "fd:" + number, queues, number);
        } else {
            exports.export(disk, Path.of(socket), queues);
            saver.saved(disk, socket, queues, -1);
        }
        List<io.kickplug.vhost.server.VhostUserServer.Status> status = exports.list().stream()
                .filter(s -> s.name().equals(disk)).toList();
        return json ? StatusTable.json(status) : StatusTable.format(status);
    }

    /** The operand and whether {@code --json} is set, for the commands that take one disk or none. */
    private static OptionArgs.Parsed jsonAndOperands(List<String> args, String usage, int operands) {
        OptionArgs.Parsed parsed = OptionArgs.parse(args, usage, Set.of("--json"));
        if (parsed.operands().size() != operands || !parsed.options().keySet().stream().allMatch("--json"::equals)) {
            throw new IllegalArgumentException(usage);
        }
        return parsed;
    }

    /** {@code kp:vhost-list [--json]}. */
    static String list(VhostExports exports, List<String> args) {
        OptionArgs.Parsed parsed = jsonAndOperands(args, "usage: kp:vhost-list [--json]", 0);
        return parsed.options().isEmpty() ? StatusTable.format(exports.list()) : StatusTable.json(exports.list());
    }

    /** {@code kp:vhost-stop [--json] <disk>}. */
    static String stop(VhostExports exports, List<String> args) {
        OptionArgs.Parsed parsed = jsonAndOperands(args, "usage: kp:vhost-stop [--json] <disk>", 1);
        String disk = parsed.operands().get(0);
        exports.stop(disk);
        return parsed.options().isEmpty() ? "stopped the vhost-user export of " + disk
                : "{\"stopped\":" + JsonText.quote(disk) + "}";
    }
}
