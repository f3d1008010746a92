package io.kickplug.qmp;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.notify.NotificationControl;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the QMP commands made: the block nodes, the QOM objects and the export ids, kept in the
 * {@link QmpServices.Store} so they outlive bundle updates (the disks and exports themselves live in their own
 * configurations), and the events the command being executed caused.
 */
final class QmpState {

    /** A block node. {@code disk} is the Kickplug disk it names; {@code child} the node below it, or null. */
    record Node(String name, String driver, String disk, String child, boolean owner, boolean readOnly,
            boolean direct, String filename, String throttleGroup, boolean implicit) {
    }

    record ExportRef(String id, String type, String key, String node) {
    }

    record QomObject(String id, String type, Map<String, Object> props) {
    }

    final QmpServices services;
    private final QmpServices.Store store;
    final Map<String, Node> nodes = new LinkedHashMap<>();
    final Map<String, QomObject> objects = new LinkedHashMap<>();
    final Map<String, ExportRef> exports = new LinkedHashMap<>();
    /** The events the command being executed caused. */
    final List<Map<String, Object>> events = new ArrayList<>();
    int implicitNodes;
    /** Whether the command being executed came in keyval form (for the arguments a command checks itself). */
    boolean keyval;

    QmpState(QmpServices services, QmpServices.Store store) {
        this.services = services;
        this.store = store;
        load();
    }

    DiskManager disks() {
        DiskManager d = services.disks();
        if (d == null) {
            throw QmpError.generic("the block-device bundle is not running");
        }
        return d;
    }

    static boolean wellFormed(String id) {
        // QEMU's id_wellformed: a letter, then letters, digits, '-', '.', '_'.
        return !id.isEmpty() && Character.isLetter(id.charAt(0)) && id.chars().allMatch(c -> c < 128
                && (Character.isLetterOrDigit(c) || c == '-' || c == '.' || c == '_'));
    }

    NotificationControl notifications() {
        NotificationControl n = services.notifications();
        if (n == null) {
            throw QmpError.generic("the block-device bundle's notification control is not running");
        }
        return n;
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

    // ---- state kept across bundle updates

    void save() {
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
