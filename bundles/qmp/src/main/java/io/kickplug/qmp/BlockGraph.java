package io.kickplug.qmp;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.RbdImage;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.control.ThrottleControl;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.AvailEventMode;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.qmp.QmpState.ExportRef;
import io.kickplug.qmp.QmpState.Node;
import io.kickplug.qmp.QmpState.QomObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The block node graph: blockdev-add and blockdev-del, query-named-block-nodes and block_resize. A file, null-co,
 * nbd or rbd node makes a Kickplug disk; a raw or throttle node over it names the same disk.
 */
final class BlockGraph {

    private final QmpState state;
    private final QmpServices services;
    private final Map<String, Node> nodes;
    private final Map<String, QomObject> objects;
    private final Map<String, ExportRef> exports;

    BlockGraph(QmpState state) {
        this.state = state;
        this.services = state.services;
        this.nodes = state.nodes;
        this.objects = state.objects;
        this.exports = state.exports;
    }

    Object blockdevAdd(Map<String, Object> args) {
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
        state.save();
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
            name = "#block" + (++state.implicitNodes);
        } else {
            if (!QmpState.wellFormed(name)) {
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
                    t.configure(disk, group, QomObjects.limitsOf(g));
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
        String name = "#block" + (++state.implicitNodes);
        @SuppressWarnings("unchecked")
        Map<String, Object> cache = (Map<String, Object>) a.getOrDefault("cache", Map.of());
        Node node = leaf(a, name, diskName, Boolean.TRUE.equals(a.get("read-only")),
                Boolean.TRUE.equals(cache.get("direct")), undo);
        nodes.put(name, node);
        undo.add(() -> nodes.remove(name));
        return node;
    }

    /** A node that makes a disk: file, host_device, null-co, null-aio, nbd, rbd. */
    private Node leaf(Map<String, Object> a, String name, String diskName, boolean readOnly, boolean direct,
            List<Runnable> undo) {
        DiskManager dm = state.disks();
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
            case "rbd" -> {
                RbdImage image = rbdImage(a, readOnly);
                readOnly = readOnly || image.snapshot() != null;
                filename = image.toPath();
                // librbd decides how it caches (QEMU's cache.direct only turns rbd_cache off): direct stays false.
                backend = new BackendSpec(RbdImage.KIND, filename, 0, readOnly, false);
            }
            default -> throw QmpError.generic("Kickplug does not support driver '" + driver + "'");
        }
        DiskSpec spec = new DiskSpec(diskName, backend, TransportKind.MMIO, 1, DiskSpec.DEFAULT_QUEUE_SIZE, 1, null,
                DiskSpec.DEFAULT_GUEST_MEMORY);
        spec = withSettings(spec, a);
        DiskInfo info = dm.attach(spec);
        undo.add(() -> dm.detach(diskName));
        if (a.get("x-notify") != null) {
            state.notifications().setStrategy(diskName, (String) a.get("x-notify"), NotificationControl.ALL_QUEUES);
        }
        return new Node(name, driver, info.name(), null, true, info.readOnly(), direct, filename, null,
                name.startsWith("#"));
    }

    /**
     * BlockdevOptionsRbd as Kickplug's {@link RbdImage}: pool, namespace, image, snapshot, conf and user (QEMU's
     * block/rbd.c qemu_rbd_open). A snapshot is read-only: without {@code read-only} or {@code auto-read-only} QEMU
     * refuses it (bdrv_apply_auto_read_only), and so does Kickplug. What the image cannot carry is refused by name.
     */
    private static RbdImage rbdImage(Map<String, Object> a, boolean readOnly) {
        List<String> unsupported = new ArrayList<>();
        for (String key : List.of("encrypt", "key-secret", "auth-client-required", "server")) {
            if (a.get(key) != null) {
                unsupported.add(key);
            }
        }
        if (!unsupported.isEmpty()) {
            throw QmpError.generic("Kickplug's rbd node does not support " + String.join(", ", unsupported)
                    + " (librbd's encryption, secrets, auth and monitor addresses: give the monitors, auth and keyring"
                    + " in the conf file)");
        }
        if (a.get("snapshot") != null && !readOnly && !Boolean.TRUE.equals(a.get("auto-read-only"))) {
            throw QmpError.generic("rbd snapshots are read-only");
        }
        try {
            return new RbdImage((String) a.get("pool"), (String) a.get("namespace"), (String) a.get("image"),
                    (String) a.get("snapshot"), (String) a.get("conf"), (String) a.get("user"), null);
        } catch (IllegalArgumentException e) {
            throw QmpError.generic(e.getMessage());
        }
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
                case "x-notify" -> state.notifications().setStrategy(disk, (String) a.get(key),
                        NotificationControl.ALL_QUEUES);
                case "x-tracked-lock" -> state.disks().setTrackedLock(disk, TrackedLockKind.parse((String) a.get(key)));
                case "x-ring" -> state.disks().setRing(disk, RingFormat.parse((String) a.get(key)));
                default -> throw QmpError.generic("'" + key + "' is a setting of the node that makes the disk ("
                        + "a running disk keeps it)");
            }
        }
    }

    Object blockdevDel(Map<String, Object> args) {
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
        state.save();
        return Map.of();
    }

    private void delete(Node node) {
        if (node.owner()) {
            state.disks().detach(node.disk());
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

    List<Object> namedNodes() {
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

    Object resize(Map<String, Object> args) {
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
        state.disks().resize(node.disk(), size);
        return Map.of();
    }

    String diskOf(Map<String, Object> a) {
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
}
