package io.kickplug.qmp;

import io.kickplug.api.blk.DiskException;
import io.kickplug.qmp.Schema.Scalar;
import io.kickplug.qmp.Schema.Struct;
import io.kickplug.qmp.Schema.Type;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Executes QMP commands as qemu-storage-daemon answers them, on Kickplug's disks and exports: a block node is a
 * Kickplug disk (a file, null-co or nbd node makes one; a raw or throttle node over it names the same disk), an
 * export is the vhost-user or NBD bundle's, objects are iothread and throttle-group settings. The nodes, objects
 * and export ids are kept in the {@link QmpServices.Store}; the disks and exports themselves in their own
 * configurations, so all of it outlives bundle updates. One command at a time (QEMU's monitor runs commands in its
 * main loop).
 */
public final class QmpEngine {

    /** The QEMU version whose qemu-storage-daemon this engine answers as (query-version). */
    public static final int[] QEMU_VERSION = {7, 2, 0};

    /** One answered command: the response object and the events it caused (a monitor sends them first). */
    public record Reply(Map<String, Object> response, List<Map<String, Object>> events, boolean quit) {
    }

    private record Command(Type args, Function<Map<String, Object>, Object> run) {
    }

    private final QmpServices services;
    private final String packageVersion;
    private final Map<String, Command> commands = new LinkedHashMap<>();
    private final QmpState state;
    private final BlockGraph graph;
    private final BlockExportCommands exports;
    private final QomObjects objects;
    private final KickplugCommands kickplug;
    private boolean quit;

    public QmpEngine(QmpServices services, QmpServices.Store store, String packageVersion) {
        this.services = services;
        this.packageVersion = packageVersion;
        this.state = new QmpState(services, store);
        this.graph = new BlockGraph(state);
        this.exports = new BlockExportCommands(state);
        this.objects = new QomObjects(state);
        this.kickplug = new KickplugCommands(state, graph);
        define();
    }

    private void define() {
        commands.put("qmp_capabilities", new Command(Struct.of(Schema.opt("enable",
                new Schema.ListOf(Schema.Enum.of("oob")))), a -> Map.of()));
        commands.put("query-version", new Command(QapiTypes.NONE, a -> version()));
        commands.put("query-commands", new Command(QapiTypes.NONE, a -> commandList()));
        commands.put("blockdev-add", new Command(QapiTypes.BLOCKDEV_OPTIONS, graph::blockdevAdd));
        commands.put("blockdev-del", new Command(Struct.of(Schema.req("node-name", Scalar.STR)), graph::blockdevDel));
        commands.put("query-named-block-nodes", new Command(Struct.of(Schema.opt("flat", Scalar.BOOL)),
                a -> graph.namedNodes()));
        commands.put("block_resize", new Command(Struct.of(Schema.opt("device", Scalar.STR),
                Schema.opt("node-name", Scalar.STR), Schema.req("size", Scalar.INT)), graph::resize));
        commands.put("block-export-add", new Command(QapiTypes.BLOCK_EXPORT_OPTIONS, exports::exportAdd));
        commands.put("block-export-del", new Command(Struct.of(Schema.req("id", Scalar.STR),
                Schema.opt("mode", Schema.Enum.of("safe", "hard"))), exports::exportDel));
        commands.put("query-block-exports", new Command(QapiTypes.NONE, a -> exports.exportList()));
        commands.put("object-add", new Command(QapiTypes.OBJECT_OPTIONS, objects::objectAdd));
        commands.put("object-del", new Command(Struct.of(Schema.req("id", Scalar.STR)), objects::objectDel));
        commands.put("nbd-server-start", new Command(Struct.of(Schema.req("addr", Scalar.ANY),
                Schema.opt("tls-creds", Scalar.STR), Schema.opt("tls-authz", Scalar.STR),
                Schema.opt("max-connections", Scalar.UINT32)), exports::nbdStart));
        commands.put("nbd-server-stop", new Command(QapiTypes.NONE, exports::nbdStop));
        commands.put("quit", new Command(QapiTypes.NONE, a -> {
            quit = true;
            return Map.of();
        }));
        commands.put("x-kickplug-notify", new Command(Struct.of(Schema.opt("node-name", Scalar.STR),
                Schema.opt("disk", Scalar.STR), Schema.req("strategy", Scalar.STR), Schema.opt("queue", Scalar.INT)),
                kickplug::notifyStrategy));
        commands.put("x-kickplug-swap", new Command(Struct.of(Schema.req("bundle", Scalar.STR)),
                a -> services.swap((String) a.get("bundle"))));
        commands.put("x-kickplug-stats", new Command(Struct.of(Schema.opt("node-name", Scalar.STR)), kickplug::stats));
    }

    /** The commands this engine knows, in definition order. */
    public List<String> commandNames() {
        return List.copyOf(commands.keySet());
    }

    /**
     * Executes one command object {@code {"execute": NAME, "arguments": {...}, "id": ...}} (qapi/qmp-dispatch.c's
     * checks of the object itself first).
     *
     * @param keyval the arguments come from a command line: scalars are strings, converted by type
     */
    public synchronized Reply execute(Object request, boolean keyval) {
        state.events.clear();
        quit = false;
        state.keyval = keyval;
        Object id = request instanceof Map<?, ?> m ? m.get("id") : null;
        Map<String, Object> response = new LinkedHashMap<>();
        try {
            response.put("return", dispatch(request, keyval));
        } catch (QmpError e) {
            response.put("error", e.body());
        }
        if (id != null) {
            response.put("id", id);
        }
        return new Reply(response, List.copyOf(state.events), quit && response.containsKey("return"));
    }

    @SuppressWarnings("unchecked")
    private Object dispatch(Object request, boolean keyval) {
        if (!(request instanceof Map)) {
            throw QmpError.generic("QMP input must be a JSON object");
        }
        Map<String, Object> dict = (Map<String, Object>) request;
        for (String key : dict.keySet()) {
            if (!key.equals("execute") && !key.equals("arguments") && !key.equals("id")) {
                throw QmpError.generic(key.equals("exec-oob")
                        ? "QMP input member 'exec-oob' is not supported by Kickplug"
                        : "QMP input member '" + key + "' is unexpected");
            }
        }
        Object name = dict.get("execute");
        if (name == null) {
            throw QmpError.generic("QMP input lacks member 'execute'");
        }
        if (!(name instanceof String)) {
            throw QmpError.generic("QMP input member 'execute' must be a string");
        }
        Object args = dict.containsKey("arguments") ? dict.get("arguments") : Map.of();
        if (!(args instanceof Map)) {
            throw QmpError.generic("QMP input member 'arguments' must be an object");
        }
        Command c = commands.get(name);
        if (c == null) {
            throw new QmpError(QmpError.COMMAND_NOT_FOUND, "The command " + name + " has not been found");
        }
        Map<String, Object> checked = (Map<String, Object>) Schema.check(c.args(), args, null, keyval);
        try {
            return c.run().apply(checked);
        } catch (DiskException | IllegalArgumentException | IllegalStateException | UnsupportedOperationException e) {
            throw QmpError.generic(e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    // ---- query-version, query-commands

    private Map<String, Object> version() {
        Map<String, Object> qemu = new LinkedHashMap<>();
        qemu.put("micro", (long) QEMU_VERSION[2]);
        qemu.put("minor", (long) QEMU_VERSION[1]);
        qemu.put("major", (long) QEMU_VERSION[0]);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("qemu", qemu);
        out.put("package", "kickplug " + packageVersion);
        return out;
    }

    private List<Object> commandList() {
        List<Object> out = new ArrayList<>();
        for (String n : commands.keySet()) {
            out.add(Map.of("name", n));
        }
        return out;
    }
}
