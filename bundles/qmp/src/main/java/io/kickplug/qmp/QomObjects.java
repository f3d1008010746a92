package io.kickplug.qmp;

import io.kickplug.api.poll.PollParams;
import io.kickplug.qmp.QmpState.Node;
import io.kickplug.qmp.QmpState.QomObject;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The QOM objects: object-add and object-del of iothread and throttle-group settings. */
final class QomObjects {

    private final QmpState state;
    private final Map<String, Node> nodes;
    private final Map<String, QomObject> objects;

    QomObjects(QmpState state) {
        this.state = state;
        this.nodes = state.nodes;
        this.objects = state.objects;
    }

    // ---- object-add, object-del

    @SuppressWarnings("unchecked")
    Object objectAdd(Map<String, Object> a) {
        String id = (String) a.get("id");
        if (!QmpState.wellFormed(id)) {
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
        state.save();
        return Map.of();
    }

    static Map<String, Long> limitsOf(QomObject group) {
        Map<String, Long> out = new LinkedHashMap<>();
        group.props().forEach((k, v) -> {
            if ((Long) v != 0) {
                out.put(k, (Long) v);
            }
        });
        return out;
    }

    Object objectDel(Map<String, Object> a) {
        String id = (String) a.get("id");
        QomObject o = objects.get(id);
        if (o == null) {
            throw QmpError.generic("object '" + id + "' not found");
        }
        if (nodes.values().stream().anyMatch(n -> id.equals(n.throttleGroup()))) {
            throw QmpError.generic("object '" + id + "' is in use, can not be deleted");
        }
        objects.remove(id);
        state.save();
        return Map.of();
    }
}
