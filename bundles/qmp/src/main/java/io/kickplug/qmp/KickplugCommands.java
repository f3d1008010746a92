package io.kickplug.qmp;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.qmp.QmpState.Node;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Kickplug's own commands: x-kickplug-notify and x-kickplug-stats. */
final class KickplugCommands {

    private final QmpState state;
    private final QmpServices services;
    private final Map<String, Node> nodes;
    private final BlockGraph graph;

    KickplugCommands(QmpState state, BlockGraph graph) {
        this.state = state;
        this.services = state.services;
        this.nodes = state.nodes;
        this.graph = graph;
    }

    Object notifyStrategy(Map<String, Object> a) {
        String disk = graph.diskOf(a);
        int queue = a.get("queue") == null ? NotificationControl.ALL_QUEUES : ((Long) a.get("queue")).intValue();
        List<Object> out = new ArrayList<>();
        for (QueueCounters q : state.notifications().setStrategy(disk, (String) a.get("strategy"), queue)) {
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

    Object stats(Map<String, Object> a) {
        List<String> disks = new ArrayList<>();
        if (a.get("node-name") != null) {
            disks.add(graph.diskOf(a));
        } else {
            nodes.values().stream().filter(Node::owner).forEach(n -> disks.add(n.disk()));
        }
        NotificationControl nc = services.notifications();
        List<Object> out = new ArrayList<>();
        for (String d : disks) {
            DiskInfo info = state.disks().info(d);
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
}
