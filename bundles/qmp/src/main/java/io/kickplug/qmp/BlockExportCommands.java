package io.kickplug.qmp;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.control.BlockExports;
import io.kickplug.api.control.NbdServerControl;
import io.kickplug.api.poll.PollParams;
import io.kickplug.qmp.QmpState.ExportRef;
import io.kickplug.qmp.QmpState.Node;
import io.kickplug.qmp.QmpState.QomObject;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The exports: block-export-add, block-export-del and query-block-exports on the vhost-user or NBD bundle, and
 * nbd-server-start and nbd-server-stop (stopping the server ends its exports, with their BLOCK_EXPORT_DELETED events).
 */
final class BlockExportCommands {

    private final QmpState state;
    private final QmpServices services;
    private final Map<String, Node> nodes;
    private final Map<String, QomObject> objects;
    private final Map<String, ExportRef> exports;
    private final List<Map<String, Object>> events;

    BlockExportCommands(QmpState state) {
        this.state = state;
        this.services = state.services;
        this.nodes = state.nodes;
        this.objects = state.objects;
        this.exports = state.exports;
        this.events = state.events;
    }

    // ---- block-export-add, block-export-del, query-block-exports

    @SuppressWarnings("unchecked")
    Object exportAdd(Map<String, Object> a) {
        String id = (String) a.get("id");
        String type = (String) a.get("type");
        if (!QmpState.wellFormed(id)) {
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
        state.save();
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
        state.disks().setPolling(disk, ns > 0, ns > 0 ? new PollParams(ns, grow, shrink) : null);
    }

    Object exportDel(Map<String, Object> a) {
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
        state.save();
        events.add(QmpState.event("BLOCK_EXPORT_DELETED", Map.of("id", id)));
        return Map.of();
    }

    List<Object> exportList() {
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

    // ---- nbd-server-start, nbd-server-stop

    @SuppressWarnings("unchecked")
    Object nbdStart(Map<String, Object> a) {
        if (a.get("tls-creds") != null || a.get("tls-authz") != null) {
            throw QmpError.generic("Kickplug's NBD server does not support TLS");
        }
        Object raw = a.get("addr");
        Map<String, Object> addr;
        if (raw instanceof Map<?, ?> m && m.containsKey("data")) {
            Map<String, Object> legacy = (Map<String, Object>) Schema.check(QapiTypes.SOCKET_ADDRESS_LEGACY, raw,
                    "addr", state.keyval);
            addr = new LinkedHashMap<>((Map<String, Object>) legacy.get("data"));
            addr.put("type", legacy.get("type"));
        } else {
            // The command line's flat form (--nbd-server addr.type=unix,addr.path=...), accepted here too.
            addr = (Map<String, Object>) Schema.check(QapiTypes.SOCKET_ADDRESS, raw, "addr", state.keyval);
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

    Object nbdStop(Map<String, Object> a) {
        NbdServerControl server = services.nbdServer();
        if (server == null || server.address() == null) {
            throw QmpError.generic("NBD server not running");
        }
        server.stop();
        for (ExportRef e : new ArrayList<>(exports.values())) {
            if (e.type().equals("nbd")) {
                exports.remove(e.id());
                events.add(QmpState.event("BLOCK_EXPORT_DELETED", Map.of("id", e.id())));
            }
        }
        state.save();
        return Map.of();
    }
}
