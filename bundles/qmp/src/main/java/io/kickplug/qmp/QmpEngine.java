package io.kickplug.qmp;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.control.BlockExports;
import io.kickplug.api.control.NbdServerControl;
import io.kickplug.api.control.ThrottleControl;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.AvailEventMode;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.qmp.Schema.Scalar;
import io.kickplug.qmp.Schema.Struct;
import io.kickplug.qmp.Schema.Type;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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

    /** A block node. {@code disk} is the Kickplug disk it names; {@code child} the node below it, or null. */
    record Node(String name, String driver, String disk, String child, boolean owner, boolean readOnly,
            boolean direct, String filename, String throttleGroup, boolean implicit) {
    }

    record ExportRef(String id, String type, String key, String node) {
    }

    record QomObject(String id, String type, Map<String, Object> props) {
    }

    private record Command(Type args, Function<Map<String, Object>, Object> run) {
    }

    private final QmpServices services;
    private final QmpServices.Store store;
    private final String packageVersion;
    private final Map<String, Command> commands = new LinkedHashMap<>();
    private final Map<String, Node> nodes = new LinkedHashMap<>();
    private final Map<String, QomObject> objects = new LinkedHashMap<>();
    private final Map<String, ExportRef> exports = new LinkedHashMap<>();
    private final List<Map<String, Object>> events = new ArrayList<>();
    private int implicitNodes;
    private boolean quit;
    /** Whether the command being executed came in keyval form (for the arguments a command checks itself). */
    private boolean keyval;

    public QmpEngine(QmpServices services, QmpServices.Store store, String packageVersion) {
        this.services = services;
        this.store = store;
        this.packageVersion = packageVersion;
        define();
        load();
    }

    private void define() {
        commands.put("qmp_capabilities", new Command(Struct.of(Schema.opt("enable",
                new Schema.ListOf(Schema.Enum.of("oob")))), a -> Map.of()));
        commands.put("query-version", new Command(QapiTypes.NONE, a -> version()));
        commands.put("query-commands", new Command(QapiTypes.NONE, a -> commandList()));
        commands.put("blockdev-add", new Command(QapiTypes.BLOCKDEV_OPTIONS, this::blockdevAdd));
        commands.put("blockdev-del", new Command(Struct.of(Schema.req("node-name", Scalar.STR)), this::blockdevDel));
        commands.put("query-named-block-nodes", new Command(Struct.of(Schema.opt("flat", Scalar.BOOL)),
                a -> namedNodes()));
        commands.put("block_resize", new Command(Struct.of(Schema.opt("device", Scalar.STR),
                Schema.opt("node-name", Scalar.STR), Schema.req("size", Scalar.INT)), this::resize));
        commands.put("block-export-add", new Command(QapiTypes.BLOCK_EXPORT_OPTIONS, this::exportAdd));
        commands.put("block-export-del", new Command(Struct.of(Schema.req("id", Scalar.STR),
                Schema.opt("mode", Schema.Enum.of("safe", "hard"))), this::exportDel));
        commands.put("query-block-exports", new Command(QapiTypes.NONE, a -> exportList()));
        commands.put("object-add", new Command(QapiTypes.OBJECT_OPTIONS, this::objectAdd));
        commands.put("object-del", new Command(Struct.of(Schema.req("id", Scalar.STR)), this::objectDel));
        commands.put("nbd-server-start", new Command(Struct.of(Schema.req("addr", Scalar.ANY),
                Schema.opt("tls-creds", Scalar.STR), Schema.opt("tls-authz", Scalar.STR),
                Schema.opt("max-connections", Scalar.UINT32)), this::nbdStart));
        commands.put("nbd-server-stop", new Command(QapiTypes.NONE, this::nbdStop));
        commands.put("quit", new Command(QapiTypes.NONE, a -> {
            quit = true;
            return Map.of();
        }));
        commands.put("x-kickplug-notify", new Command(Struct.of(Schema.opt("node-name", Scalar.STR),
                Schema.opt("disk", Scalar.STR), Schema.req("strategy", Scalar.STR), Schema.opt("queue", Scalar.INT)),
                this::notifyStrategy));
        commands.put("x-kickplug-swap", new Command(Struct.of(Schema.req("bundle", Scalar.STR)),
                a -> services.swap((String) a.get("bundle"))));
        commands.put("x-kickplug-stats", new Command(Struct.of(Schema.opt("node-name", Scalar.STR)), this::stats));
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
        events.clear();
        quit = false;
        this.keyval = keyval;
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
        return new Reply(response, List.copyOf(events), quit && response.containsKey("return"));
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

    // ---- blockdev-add, blockdev-del, query-named-block-nodes

    private DiskManager disks() {
        DiskManager d = services.disks();
        if (d == null) {
            throw QmpError.generic("the block-device bundle is not running");
        }
        return d;
    }

    private static boolean wellFormed(String id) {
        // QEMU's id_wellformed: a letter, then letters, digits, '-', '.', '_'.
        return !id.isEmpty() && Character.isLetter(id.charAt(0)) && id.chars().allMatch(c -> c < 128
                && (Character.isLetterOrDigit(c) || c == '-' || c == '.' || c == '_'));
    }

    private Object blockdevAdd(Map<String, Object> args) {
        String name = (String) args.get("node-name");
        if (name == null) {
            throw QmpError.generic("'node-name' must be specified for the root node");
        }
        List<Runnable> undo = new ArrayList<>();
        try {
            build(args, name, null, undo);
        } catch (RuntimeException e) {
            for (int i = undo.size() - 1; i >= 0; i--) {
                try {
                    undo.get(i).run();
                } catch (RuntimeException ignored) {
                    // best effort: the first error is the one reported
                }
            }
            throw e;
        }
        save();
        return Map.of();
    }

    /**
     * Makes node {@code args} (named {@code name}, or an implicit name when null) and the nodes under it.
     *
     * @param inherited the parent's options its implicit children inherit (read-only, cache.direct, x- settings)
     */
    @SuppressWarnings("unchecked")
    private Node build(Map<String, Object> args, String name, Map<String, Object> inherited, List<Runnable> undo) {
        Map<String, Object> a = new LinkedHashMap<>(args);
        if (inherited != null) {
            inherited.forEach(a::putIfAbsent);
        }
        String driver = (String) a.get("driver");
        if (name == null) {
            name = "#block" + (++implicitNodes);
        } else {
            if (!wellFormed(name)) {
                throw QmpError.generic("Invalid node-name: '" + name + "'");
            }
            if (nodes.containsKey(name)) {
                throw QmpError.generic("Duplicate nodes with node-name='" + name + "'");
            }
        }
        boolean readOnly = Boolean.TRUE.equals(a.get("read-only"));
        Map<String, Object> cache = (Map<String, Object>) a.getOrDefault("cache", Map.of());
        boolean direct = Boolean.TRUE.equals(cache.get("direct"));
        if (Boolean.TRUE.equals(cache.get("no-flush"))) {
            throw QmpError.generic("Kickplug does not support cache.no-flush");
        }
        if (a.get("detect-zeroes") != null && !"off".equals(a.get("detect-zeroes"))) {
            throw QmpError.generic("Kickplug does not support detect-zeroes=" + a.get("detect-zeroes"));
        }
        Node node;
        switch (driver) {
            case "raw", "throttle" -> {
                if (a.get("offset") != null || a.get("size") != null) {
                    throw QmpError.generic("Kickplug does not support raw's offset and size");
                }
                Object file = a.get("file");
                Node child;
                if (file instanceof String ref) {
                    child = nodes.get(ref);
                    if (child == null) {
                        throw QmpError.generic("Cannot find device='" + ref + "' nor node-name='" + ref + "'");
                    }
                    if (!settingsOf(a).isEmpty()) {
                        applyRuntimeSettings(child.disk(), a);
                    }
                } else {
                    // An inline child inherits the parent's options (QEMU's bdrv_inherited_options).
                    Map<String, Object> inherit = new LinkedHashMap<>(settingsOf(a));
                    if (a.containsKey("read-only")) {
                        inherit.put("read-only", a.get("read-only"));
                    }
                    if (a.containsKey("cache")) {
                        inherit.put("cache", a.get("cache"));
                    }
                    if (a.containsKey("discard")) {
                        inherit.put("discard", a.get("discard"));
                    }
                    Map<String, Object> def = new LinkedHashMap<>((Map<String, Object>) file);
                    String childName = (String) def.get("node-name");
                    // The implicit child's disk takes the parent's name: "#block1" is no disk name.
                    child = build(def, childName, inherit, undo, childName == null ? name : null);
                }
                if (readOnly != child.readOnly() && a.containsKey("read-only")) {
                    throw QmpError.generic("Kickplug cannot open node '" + name + "' "
                            + (readOnly ? "read-only" : "read-write") + " over node '" + child.name() + "' ("
                            + (child.readOnly() ? "read-only" : "read-write") + "): give both the same read-only");
                }
                String group = null;
                if (driver.equals("throttle")) {
                    group = (String) a.get("throttle-group");
                    QomObject g = objects.get(group);
                    if (g == null || !g.type().equals("throttle-group")) {
                        throw QmpError.generic("Throttle group '" + group + "' does not exist");
                    }
                    if (nodes.values().stream().anyMatch(n -> n.throttleGroup() != null
                            && n.disk().equals(child.disk()))) {
                        throw QmpError.generic("Kickplug cannot stack two throttle nodes on disk '" + child.disk()
                                + "'");
                    }
                    ThrottleControl t = services.throttle();
                    if (t == null) {
                        throw QmpError.generic("the throttle bundle is not running");
                    }
                    String disk = child.disk();
                    t.configure(disk, group, limitsOf(g));
                    undo.add(() -> t.configure(disk, disk, Map.of()));
                }
                node = new Node(name, driver, child.disk(), child.name(), false, child.readOnly(), child.direct(),
                        child.filename(), group, name.startsWith("#"));
            }
            default -> node = leaf(a, name, name, readOnly, direct, undo);
        }
        nodes.put(name, node);
        String made = name;
        undo.add(() -> nodes.remove(made));
        return node;
    }

    private Node build(Map<String, Object> def, String childName, Map<String, Object> inherit, List<Runnable> undo,
            String diskName) {
        if (diskName == null) {
            return build(def, childName, inherit, undo);
        }
        // An implicit leaf: built under its implicit name, with the parent's name for its disk.
        Map<String, Object> a = new LinkedHashMap<>(def);
        inherit.forEach(a::putIfAbsent);
        String driver = (String) a.get("driver");
        if (driver.equals("raw") || driver.equals("throttle")) {
            return build(def, null, inherit, undo);
        }
        String name = "#block" + (++implicitNodes);
        @SuppressWarnings("unchecked")
        Map<String, Object> cache = (Map<String, Object>) a.getOrDefault("cache", Map.of());
        Node node = leaf(a, name, diskName, Boolean.TRUE.equals(a.get("read-only")),
                Boolean.TRUE.equals(cache.get("direct")), undo);
        nodes.put(name, node);
        undo.add(() -> nodes.remove(name));
        return node;
    }

    /** A node that makes a disk: file, host_device, null-co, null-aio, nbd. */
    private Node leaf(Map<String, Object> a, String name, String diskName, boolean readOnly, boolean direct,
            List<Runnable> undo) {
        DiskManager dm = disks();
        if (dm.configuredDisks().contains(diskName)) {
            throw QmpError.generic("a Kickplug disk named '" + diskName + "' exists already");
        }
        String driver = (String) a.get("driver");
        BackendSpec backend;
        String filename = null;
        switch (driver) {
            case "file", "host_device" -> {
                filename = (String) a.get("filename");
                if (a.get("pr-manager") != null) {
                    throw QmpError.generic("Kickplug does not support pr-manager");
                }
                backend = new BackendSpec("file", filename, 0, readOnly, direct);
            }
            case "null-co", "null-aio" -> {
                long size = a.get("size") == null ? 1L << 30 : (Long) a.get("size");
                if (size <= 0 || size % 512 != 0) {
                    throw QmpError.generic("Kickplug's null-co size must be a positive multiple of 512, not " + size);
                }
                long latency = a.get("latency-ns") == null ? 0 : (Long) a.get("latency-ns");
                backend = new BackendSpec("null", null, size, readOnly, false)
                        .withNullOptions(Boolean.TRUE.equals(a.get("read-zeroes")), latency);
                filename = "null-co://";
            }
            case "nbd" -> {
                if (a.get("tls-creds") != null || a.get("x-dirty-bitmap") != null) {
                    throw QmpError.generic("Kickplug's nbd node does not support tls-creds nor x-dirty-bitmap");
                }
                filename = nbdUri(a);
                backend = new BackendSpec("nbd", filename, 0, readOnly, false);
            }
            default -> throw QmpError.generic("Kickplug does not support driver '" + driver + "'");
        }
        DiskSpec spec = new DiskSpec(diskName, backend, TransportKind.MMIO, 1, DiskSpec.DEFAULT_QUEUE_SIZE, 1, null,
                DiskSpec.DEFAULT_GUEST_MEMORY);
        spec = withSettings(spec, a);
        DiskInfo info = dm.attach(spec);
        undo.add(() -> dm.detach(diskName));
        if (a.get("x-notify") != null) {
            notifications().setStrategy(diskName, (String) a.get("x-notify"), NotificationControl.ALL_QUEUES);
        }
        return new Node(name, driver, info.name(), null, true, info.readOnly(), direct, filename, null,
                name.startsWith("#"));
    }

    @SuppressWarnings("unchecked")
    private static String nbdUri(Map<String, Object> a) {
        Map<String, Object> server = (Map<String, Object>) a.get("server");
        String export = a.get("export") == null ? "" : (String) a.get("export");
        switch ((String) server.get("type")) {
            case "unix" -> {
                return "nbd+unix:///" + export + "?socket=" + server.get("path");
            }
            case "inet" -> {
                String host = (String) server.get("host");
                return "nbd://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + server.get("port") + "/"
                        + export;
            }
            default -> throw QmpError.generic("Kickplug's nbd node takes server.type unix or inet, not "
                    + server.get("type"));
        }
    }

    private static Map<String, Object> settingsOf(Map<String, Object> a) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Schema.Field f : QapiTypes.KICKPLUG_SETTINGS) {
            if (a.containsKey(f.name())) {
                out.put(f.name(), a.get(f.name()));
            }
        }
        return out;
    }

    /** The x- settings a disk takes when it is made. */
    private static DiskSpec withSettings(DiskSpec spec, Map<String, Object> a) {
        if (a.get("x-ring") != null) {
            spec = spec.withRing(RingFormat.parse((String) a.get("x-ring")));
        }
        if (a.get("x-tracked-lock") != null) {
            spec = spec.withTrackedLock(TrackedLockKind.parse((String) a.get("x-tracked-lock")));
        }
        if (a.get("x-avail-event") != null) {
            spec = spec.withAvailEvent(AvailEventMode.parse((String) a.get("x-avail-event")));
        }
        int queues = a.get("x-queues") == null ? spec.numQueues() : ((Long) a.get("x-queues")).intValue();
        int size = a.get("x-queue-size") == null ? spec.queueSize() : ((Long) a.get("x-queue-size")).intValue();
        spec = spec.withQueues(queues, size);
        int threads = a.get("x-iothreads") == null ? spec.ioThreads() : ((Long) a.get("x-iothreads")).intValue();
        List<List<Integer>> mapping = a.get("x-mapping") == null ? spec.mapping()
                : DiskSpec.parseMapping((String) a.get("x-mapping"));
        spec = spec.withIoThreads(threads, mapping);
        if (a.get("x-workers") != null) {
            spec = spec.withWorkers(((Long) a.get("x-workers")).intValue());
        }
        if (a.get("x-serial") != null) {
            spec = spec.withSerial((String) a.get("x-serial"));
        }
        return spec;
    }

    /** x- settings on a node over an existing disk: those a running disk can change. */
    private void applyRuntimeSettings(String disk, Map<String, Object> a) {
        for (String key : settingsOf(a).keySet()) {
            switch (key) {
                case "x-notify" -> notifications().setStrategy(disk, (String) a.get(key),
                        NotificationControl.ALL_QUEUES);
                case "x-tracked-lock" -> disks().setTrackedLock(disk, TrackedLockKind.parse((String) a.get(key)));
                case "x-ring" -> disks().setRing(disk, RingFormat.parse((String) a.get(key)));
                default -> throw QmpError.generic("'" + key + "' is a setting of the node that makes the disk ("
                        + "a running disk keeps it)");
            }
        }
    }

    private NotificationControl notifications() {
        NotificationControl n = services.notifications();
        if (n == null) {
            throw QmpError.generic("the block-device bundle's notification control is not running");
        }
        return n;
    }

    private Object blockdevDel(Map<String, Object> args) {
        String name = (String) args.get("node-name");
        Node node = nodes.get(name);
        if (node == null) {
            throw QmpError.generic("Failed to find node with node-name='" + name + "'");
        }
        if (exports.values().stream().anyMatch(e -> e.node().equals(name))) {
            throw QmpError.generic("Node " + name + " is in use");
        }
        if (nodes.values().stream().anyMatch(n -> name.equals(n.child()))) {
            throw QmpError.generic("Block device " + name + " is in use");
        }
        if (node.implicit()) {
            throw QmpError.generic("Node " + name + " is not a root node");
        }
        delete(node);
        save();
        return Map.of();
    }

    private void delete(Node node) {
        if (node.owner()) {
            disks().detach(node.disk());
        } else if (node.throttleGroup() != null && services.throttle() != null) {
            services.throttle().configure(node.disk(), node.disk(), Map.of());
        }
        nodes.remove(node.name());
        if (node.child() != null) {
            Node child = nodes.get(node.child());
            if (child != null && child.implicit()) {
                delete(child);
            }
        }
    }

    private List<Object> namedNodes() {
        List<Object> out = new ArrayList<>();
        DiskManager dm = services.disks();
        List<Node> newestFirst = new ArrayList<>(nodes.values());
        java.util.Collections.reverse(newestFirst); // as qemu-storage-daemon lists them
        for (Node n : newestFirst) {
            DiskInfo info = null;
            try {
                info = dm == null ? null : dm.info(n.disk());
            } catch (DiskException e) {
                // being rebuilt after an update
            }
            Map<String, Object> m = new LinkedHashMap<>();
            String file = n.filename() == null ? "" : n.filename();
            m.put("file", file);
            m.put("node-name", n.name());
            m.put("ro", n.readOnly());
            m.put("drv", n.driver());
            m.put("backing_file_depth", 0L);
            m.put("encrypted", false);
            m.put("detect_zeroes", "off");
            for (String k : List.of("bps", "bps_rd", "bps_wr", "iops", "iops_rd", "iops_wr")) {
                m.put(k, 0L);
            }
            Map<String, Object> image = new LinkedHashMap<>();
            image.put("virtual-size", info == null ? 0L : info.sizeBytes());
            image.put("filename", file);
            image.put("format", n.driver());
            image.put("dirty-flag", false);
            m.put("image", image);
            Map<String, Object> cache = new LinkedHashMap<>();
            cache.put("no-flush", false);
            cache.put("direct", n.direct());
            cache.put("writeback", true);
            m.put("cache", cache);
            m.put("write_threshold", 0L);
            m.put("x-kickplug-disk", n.disk());
            out.add(m);
        }
        return out;
    }

    // ---- block_resize

    private Object resize(Map<String, Object> args) {
        String device = (String) args.get("device");
        String nodeName = (String) args.get("node-name");
        Node node = nodeName == null ? null : nodes.get(nodeName);
        if (node == null) {
            throw QmpError.generic("Cannot find device='" + (device == null ? "" : device) + "' nor node-name='"
                    + (nodeName == null ? "" : nodeName) + "'");
        }
        long size = (Long) args.get("size");
        if (size < 0) {
            throw QmpError.generic("Parameter 'size' expects a >0 size");
        }
        if (node.readOnly()) {
            throw QmpError.generic("Cannot resize a read-only node '" + node.name() + "'");
        }
        disks().resize(node.disk(), size);
        return Map.of();
    }

    // ---- block-export-add, block-export-del, query-block-exports

    @SuppressWarnings("unchecked")
    private Object exportAdd(Map<String, Object> a) {
        String id = (String) a.get("id");
        String type = (String) a.get("type");
        if (!wellFormed(id)) {
            throw QmpError.generic("Invalid block export id '" + id + "'");
        }
        if (exports.containsKey(id)) {
            throw QmpError.generic("Block export id '" + id + "' is already in use");
        }
        String nodeName = (String) a.get("node-name");
        Node node = nodes.get(nodeName);
        if (node == null) {
            throw QmpError.generic("Cannot find device='' nor node-name='" + nodeName + "'");
        }
        boolean writable = Boolean.TRUE.equals(a.get("writable"));
        if (writable && node.readOnly()) {
            throw QmpError.generic("Cannot export node '" + nodeName + "' writable: it is read-only");
        }
        if (Boolean.TRUE.equals(a.get("writethrough"))) {
            throw QmpError.generic("Kickplug does not support writethrough on an export");
        }
        String iothread = (String) a.get("iothread");
        QomObject thread = null;
        if (iothread != null) {
            thread = objects.get(iothread);
            if (thread == null || !thread.type().equals("iothread")) {
                throw QmpError.generic("iothread \"" + iothread + "\" not found");
            }
        }
        Map<String, String> options = new LinkedHashMap<>();
        if (type.equals("vhost-user-blk")) {
            Map<String, Object> addr = (Map<String, Object>) a.get("addr");
            if ("fd".equals(addr.get("type"))) {
                // A listening Unix socket the daemon inherited (QEMU's test harness, systemd's socket activation).
                options.put("fd", (String) addr.get("str"));
            } else if ("unix".equals(addr.get("type"))) {
                options.put("socket", (String) addr.get("path"));
            } else {
                throw QmpError.generic("Kickplug's vhost-user-blk export takes addr.type unix or fd, not "
                        + addr.get("type"));
            }
            Object lbs = a.get("logical-block-size");
            if (lbs != null && (Long) lbs != 512) {
                throw QmpError.generic("Kickplug's vhost-user-blk export has a logical block size of 512, not " + lbs);
            }
            long queues = a.get("num-queues") == null ? 1 : (Long) a.get("num-queues");
            if (queues < 1 || queues > DiskSpec.MAX_QUEUES) {
                throw QmpError.generic("Invalid num-queues: " + queues);
            }
            options.put("queues", Long.toString(queues));
        } else {
            if (a.get("bitmaps") != null || Boolean.TRUE.equals(a.get("allocation-depth"))) {
                throw QmpError.generic("Kickplug's nbd export does not support bitmaps nor allocation-depth");
            }
            NbdServerControl server = services.nbdServer();
            if (server == null || server.address() == null) {
                throw QmpError.generic("NBD server not running");
            }
            options.put("name", a.get("name") == null ? nodeName : (String) a.get("name"));
        }
        BlockExports kind = services.exports(type);
        if (kind == null) {
            throw QmpError.generic("the bundle serving " + type + " exports is not running");
        }
        if (exports.values().stream().anyMatch(e -> e.type().equals("vhost-user-blk") && type.equals(e.type())
                && nodes.get(e.node()) != null && nodes.get(e.node()).disk().equals(node.disk()))) {
            throw QmpError.generic("Kickplug exports a disk over vhost-user once: disk '" + node.disk()
                    + "' is exported already");
        }
        BlockExports.Export made = kind.add(node.disk(), writable, options);
        exports.put(id, new ExportRef(id, type, made.key(), nodeName));
        if (thread != null) {
            applyIothread(node.disk(), thread);
        }
        save();
        return Map.of();
    }

    private void applyIothread(String disk, QomObject thread) {
        Object max = thread.props().get("poll-max-ns");
        if (max == null) {
            return;
        }
        long grow = thread.props().get("poll-grow") == null ? 0 : (Long) thread.props().get("poll-grow");
        long shrink = thread.props().get("poll-shrink") == null ? 0 : (Long) thread.props().get("poll-shrink");
        long ns = (Long) max;
        disks().setPolling(disk, ns > 0, ns > 0 ? new PollParams(ns, grow, shrink) : null);
    }

    private Object exportDel(Map<String, Object> a) {
        String id = (String) a.get("id");
        ExportRef ref = exports.get(id);
        if (ref == null) {
            throw QmpError.generic("Export '" + id + "' is not found");
        }
        BlockExports kind = services.exports(ref.type());
        if (kind == null) {
            throw QmpError.generic("the bundle serving " + ref.type() + " exports is not running");
        }
        try {
            kind.delete(ref.key());
        } catch (DiskException gone) {
            // ended by the disk's detach or kp:vhost-stop meanwhile: deleted all the same
        }
        exports.remove(id);
        save();
        events.add(event("BLOCK_EXPORT_DELETED", Map.of("id", id)));
        return Map.of();
    }

    /** An event object with QEMU's timestamp (seconds and microseconds of the wall clock). */
    static Map<String, Object> event(String name, Map<String, Object> data) {
        long micros = System.currentTimeMillis() * 1000 + (System.nanoTime() / 1000) % 1000;
        Map<String, Object> ts = new LinkedHashMap<>();
        ts.put("seconds", micros / 1_000_000);
        ts.put("microseconds", micros % 1_000_000);
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("event", name);
        e.put("data", data);
        e.put("timestamp", ts);
        return e;
    }

    private List<Object> exportList() {
        List<Object> out = new ArrayList<>();
        for (ExportRef e : exports.values()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", e.id());
            m.put("type", e.type());
            m.put("node-name", e.node());
            m.put("shutting-down", false);
            out.add(m);
        }
        return out;
    }

    // ---- object-add, object-del

    @SuppressWarnings("unchecked")
    private Object objectAdd(Map<String, Object> a) {
        String id = (String) a.get("id");
        if (!wellFormed(id)) {
            throw QmpError.generic("Parameter 'id' expects an identifier");
        }
        if (objects.containsKey(id)) {
            throw QmpError.generic("attempt to add duplicate property '" + id + "' to object (type 'container')");
        }
        String type = (String) a.get("qom-type");
        Map<String, Object> props = new LinkedHashMap<>(a);
        props.remove("qom-type");
        props.remove("id");
        if (type.equals("throttle-group")) {
            Map<String, Object> flat = new TreeMap<>();
            Map<String, Object> limits = (Map<String, Object>) props.getOrDefault("limits", Map.of());
            limits.forEach(flat::put);
            props.forEach((k, v) -> {
                if (k.startsWith("x-")) {
                    flat.put(k.substring(2), v);
                }
            });
            Object size = flat.remove("iops-size");
            if (size != null && (Long) size != 0) {
                throw QmpError.generic("Kickplug does not support iops-size");
            }
            props = flat;
            // Checked by the throttle filter when a node joins; the combinations QEMU refuses are refused there.
        } else {
            for (String k : List.of("aio-max-batch", "thread-pool-min", "thread-pool-max")) {
                props.remove(k);
            }
            Object max = props.get("poll-max-ns");
            if (max != null) {
                new PollParams((Long) max, props.get("poll-grow") == null ? 0 : (Long) props.get("poll-grow"),
                        props.get("poll-shrink") == null ? 0 : (Long) props.get("poll-shrink"));
            }
        }
        objects.put(id, new QomObject(id, type, props));
        save();
        return Map.of();
    }

    private static Map<String, Long> limitsOf(QomObject group) {
        Map<String, Long> out = new LinkedHashMap<>();
        group.props().forEach((k, v) -> {
            if ((Long) v != 0) {
                out.put(k, (Long) v);
            }
        });
        return out;
    }

    private Object objectDel(Map<String, Object> a) {
        String id = (String) a.get("id");
        QomObject o = objects.get(id);
        if (o == null) {
            throw QmpError.generic("object '" + id + "' not found");
        }
        if (nodes.values().stream().anyMatch(n -> id.equals(n.throttleGroup()))) {
            throw QmpError.generic("object '" + id + "' is in use, can not be deleted");
        }
        objects.remove(id);
        save();
        return Map.of();
    }

    // ---- nbd-server-start, nbd-server-stop

    @SuppressWarnings("unchecked")
    private Object nbdStart(Map<String, Object> a) {
        if (a.get("tls-creds") != null || a.get("tls-authz") != null) {
            throw QmpError.generic("Kickplug's NBD server does not support TLS");
        }
        Object raw = a.get("addr");
        Map<String, Object> addr;
        if (raw instanceof Map<?, ?> m && m.containsKey("data")) {
            Map<String, Object> legacy = (Map<String, Object>) Schema.check(QapiTypes.SOCKET_ADDRESS_LEGACY, raw,
                    "addr", keyval);
            addr = new LinkedHashMap<>((Map<String, Object>) legacy.get("data"));
            addr.put("type", legacy.get("type"));
        } else {
            // The command line's flat form (--nbd-server addr.type=unix,addr.path=...), accepted here too.
            addr = (Map<String, Object>) Schema.check(QapiTypes.SOCKET_ADDRESS, raw, "addr", keyval);
        }
        NbdServerControl server = services.nbdServer();
        if (server == null) {
            throw QmpError.generic("the NBD export bundle is not running");
        }
        if (server.address() != null) {
            throw QmpError.generic("NBD server already running");
        }
        int max = a.get("max-connections") == null ? 0 : ((Long) a.get("max-connections")).intValue();
        try {
            switch ((String) addr.get("type")) {
                case "unix" -> server.start((String) addr.get("path"), null, -1, max);
                case "inet" -> {
                    int port;
                    try {
                        port = Integer.parseInt((String) addr.get("port"));
                    } catch (NumberFormatException e) {
                        throw QmpError.generic("Kickplug's NBD server takes a numeric port, not '" + addr.get("port")
                                + "'");
                    }
                    server.start(null, (String) addr.get("host"), port, max);
                }
                default -> throw QmpError.generic("Kickplug's NBD server listens on addr.type unix or inet over "
                        + "QMP, not " + addr.get("type"));
            }
        } catch (IOException e) {
            throw QmpError.generic("Failed to start the NBD server: " + e.getMessage());
        }
        return Map.of();
    }

    private Object nbdStop(Map<String, Object> a) {
        NbdServerControl server = services.nbdServer();
        if (server == null || server.address() == null) {
            throw QmpError.generic("NBD server not running");
        }
        server.stop();
        for (ExportRef e : new ArrayList<>(exports.values())) {
            if (e.type().equals("nbd")) {
                exports.remove(e.id());
                events.add(event("BLOCK_EXPORT_DELETED", Map.of("id", e.id())));
            }
        }
        save();
        return Map.of();
    }

    // ---- Kickplug's own

    private String diskOf(Map<String, Object> a) {
        String nodeName = (String) a.get("node-name");
        String disk = (String) a.get("disk");
        if ((nodeName == null) == (disk == null)) {
            throw QmpError.generic("give 'node-name' or 'disk'");
        }
        if (disk != null) {
            return disk;
        }
        Node n = nodes.get(nodeName);
        if (n == null) {
            throw QmpError.generic("Cannot find device='' nor node-name='" + nodeName + "'");
        }
        return n.disk();
    }

    private Object notifyStrategy(Map<String, Object> a) {
        String disk = diskOf(a);
        int queue = a.get("queue") == null ? NotificationControl.ALL_QUEUES : ((Long) a.get("queue")).intValue();
        List<Object> out = new ArrayList<>();
        for (QueueCounters q : notifications().setStrategy(disk, (String) a.get("strategy"), queue)) {
            out.add(queueMap(q));
        }
        return out;
    }

    private static Map<String, Object> queueMap(QueueCounters q) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("queue", (long) q.queue());
        m.put("strategy", q.strategy());
        m.put("configured", q.configured());
        m.put("requests", q.requests());
        m.put("bytes", q.bytes());
        return m;
    }

    private Object stats(Map<String, Object> a) {
        List<String> disks = new ArrayList<>();
        if (a.get("node-name") != null) {
            disks.add(diskOf(a));
        } else {
            nodes.values().stream().filter(Node::owner).forEach(n -> disks.add(n.disk()));
        }
        NotificationControl nc = services.notifications();
        List<Object> out = new ArrayList<>();
        for (String d : disks) {
            DiskInfo info = disks().info(d);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("disk", d);
            m.put("size", info.sizeBytes());
            m.put("requests-completed", info.requestsCompleted());
            m.put("requests-in-flight", info.requestsInFlight());
            List<Object> queues = new ArrayList<>();
            if (nc != null) {
                for (QueueCounters q : nc.exportCounters(d)) {
                    queues.add(queueMap(q));
                }
            }
            m.put("export-queues", queues);
            out.add(m);
        }
        return out;
    }

    // ---- state kept across bundle updates

    private void save() {
        Map<String, Object> state = new LinkedHashMap<>();
        List<Object> ns = new ArrayList<>();
        for (Node n : nodes.values()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", n.name());
            m.put("driver", n.driver());
            m.put("disk", n.disk());
            m.put("child", n.child());
            m.put("owner", n.owner());
            m.put("read-only", n.readOnly());
            m.put("direct", n.direct());
            m.put("filename", n.filename());
            m.put("throttle-group", n.throttleGroup());
            m.put("implicit", n.implicit());
            ns.add(m);
        }
        state.put("nodes", ns);
        List<Object> os = new ArrayList<>();
        for (QomObject o : objects.values()) {
            os.add(Map.of("id", o.id(), "type", o.type(), "props", o.props()));
        }
        state.put("objects", os);
        List<Object> es = new ArrayList<>();
        for (ExportRef e : exports.values()) {
            es.add(Map.of("id", e.id(), "type", e.type(), "key", e.key(), "node", e.node()));
        }
        state.put("exports", es);
        state.put("implicit-nodes", (long) implicitNodes);
        store.save(Json.write(state));
    }

    @SuppressWarnings("unchecked")
    private void load() {
        String text = store.load();
        if (text == null || text.isBlank()) {
            return;
        }
        Map<String, Object> state;
        try {
            state = (Map<String, Object>) Json.parse(text);
        } catch (RuntimeException e) {
            System.getLogger(QmpEngine.class.getName()).log(System.Logger.Level.ERROR,
                    "the saved QMP state is unreadable, starting empty: " + e.getMessage());
            return;
        }
        List<String> configured;
        try {
            DiskManager dm = services.disks();
            configured = dm == null ? null : dm.configuredDisks();
        } catch (RuntimeException e) {
            configured = null;
        }
        for (Object o : (List<Object>) state.getOrDefault("nodes", List.of())) {
            Map<String, Object> m = (Map<String, Object>) o;
            Node n = new Node((String) m.get("name"), (String) m.get("driver"), (String) m.get("disk"),
                    (String) m.get("child"), Boolean.TRUE.equals(m.get("owner")),
                    Boolean.TRUE.equals(m.get("read-only")), Boolean.TRUE.equals(m.get("direct")),
                    (String) m.get("filename"), (String) m.get("throttle-group"),
                    Boolean.TRUE.equals(m.get("implicit")));
            // A disk detached while this bundle was away takes its nodes with it.
            if (configured == null || configured.contains(n.disk())) {
                nodes.put(n.name(), n);
            }
        }
        for (Object o : (List<Object>) state.getOrDefault("objects", List.of())) {
            Map<String, Object> m = (Map<String, Object>) o;
            objects.put((String) m.get("id"), new QomObject((String) m.get("id"), (String) m.get("type"),
                    new LinkedHashMap<>((Map<String, Object>) m.get("props"))));
        }
        for (Object o : (List<Object>) state.getOrDefault("exports", List.of())) {
            Map<String, Object> m = (Map<String, Object>) o;
            ExportRef e = new ExportRef((String) m.get("id"), (String) m.get("type"), (String) m.get("key"),
                    (String) m.get("node"));
            if (nodes.containsKey(e.node())) {
                exports.put(e.id(), e);
            }
        }
        Object count = state.get("implicit-nodes");
        implicitNodes = count instanceof Long l ? l.intValue() : 0;
    }
}
