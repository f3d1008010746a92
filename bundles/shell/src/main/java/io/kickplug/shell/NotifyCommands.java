package io.kickplug.shell;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Gogo commands of scope {@code kp} for completion notification: {@code kp:notify} (hot swap a disk's
 * strategy), {@code kp:strategies} and {@code kp:stats} (per-queue counters). Thin adapters over
 * {@link NotificationControl}.
 */
@Component(service = NotifyCommands.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=notify",
    "osgi.command.function=strategies",
    "osgi.command.function=stats",
})
public final class NotifyCommands {

    private static final String ALL = "";

    @Reference(name = "notificationControl", cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    private volatile NotificationControl control;

    @Reference(name = "diskManager", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile DiskManager disks;

    /** Optional: backend filters (the throttle bundle) whose counters kp:stats adds. */
    @Reference(name = "backendFilters", cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile List<io.kickplug.api.blk.BackendFilter> filters = List.of();

    /**
     * The strategies registered (the batching bundle's), by their properties: the disk manager binds each one
     * too, and may do so a moment after this component; kp:notify to one of them waits for that, briefly, so
     * that the queues switch to it rather than to {@code immediate} "until it is bound". This reference also
     * tells the launcher that a daemon whose statements use these commands starts the batching bundle before
     * them. kp:strategies and kp:stats do not wait: they list what the disk manager has bound, and it ignores a
     * registered strategy whose name it refuses.
     */
    @Reference(name = "strategies", service = CompletionNotifier.class, cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    private volatile List<Map<String, Object>> strategies = List.of();

    /** Optional: exports of disks (the vhost-user bundle), whose live-migration dirty logging kp:stats shows. */
    @Reference(name = "exportStatus", cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile List<io.kickplug.api.transport.ExportStatus> exportStatus = List.of();

    /** Why a configured strategy is not bound (its bundle stopped, uninstalled, ...); optional. */
    @Reference(name = "pluginEvents", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile PluginEvents events;

    /** The bundles that provide the strategies, for kp:strategies; null outside a framework. */
    private volatile Plugins plugins;

    public NotifyCommands() {
    }

    /** For tests: export status services (their dirty logs). */
    NotifyCommands withExports(List<io.kickplug.api.transport.ExportStatus> exports) {
        this.exportStatus = List.copyOf(exports);
        return this;
    }

    /** The dirty logs of {@code disk}'s exports (live migration); a service going away is skipped. */
    private List<io.kickplug.api.transport.ExportStatus.DirtyLog> dirtyLogs(String disk) {
        List<io.kickplug.api.transport.ExportStatus.DirtyLog> out = new ArrayList<>();
        for (io.kickplug.api.transport.ExportStatus s : exportStatus) {
            try {
                s.dirtyLogs().stream().filter(d -> d.disk().equals(disk)).forEach(out::add);
            } catch (RuntimeException goingAway) {
                // its bundle stops
            }
        }
        return out;
    }

    @org.osgi.service.component.annotations.Activate
    void activate(org.osgi.framework.BundleContext context) {
        plugins = new Plugins(context);
    }

    /** Why {@code strategy} is not bound, when known. */
    private String why(String strategy) {
        PluginEvents e = events;
        return e == null ? null : e.departures().whyText(PluginKind.STRATEGY, strategy);
    }

    /** Strategy name to the bundle providing it ("bundle version [id]"), or null outside a framework. */
    private Map<String, String> providers() {
        Plugins p = plugins;
        if (p == null) {
            return null;
        }
        Map<String, String> out = new java.util.TreeMap<>();
        for (Provided s : p.all(PluginKind.STRATEGY)) {
            out.putIfAbsent(s.name(), s.bundleText() + (s.plugin() ? " plugin" : ""));
        }
        return out;
    }

    /** For tests and for callers outside DS. */
    NotifyCommands(NotificationControl control, DiskManager disks) {
        this(control, disks, List.of());
    }

    /** For tests: with the properties of registered strategies. */
    NotifyCommands(NotificationControl control, DiskManager disks, List<Map<String, Object>> strategies) {
        this.control = control;
        this.disks = disks;
        this.strategies = List.copyOf(strategies);
    }

    @Descriptor("switch a disk's completion-notification strategy (immediate, bh, defer-call, ...) while it runs;"
            + " each queue switches at a safe point on its I/O thread")
    public String notify(
            @Descriptor("only this queue (default: all queues)")
            @Parameter(names = "--queue", absentValue = ALL) String queue,
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("disk name") String disk,
            @Descriptor("strategy name (see kp:strategies)") String strategy) {
        int q = queue.isEmpty() ? NotificationControl.ALL_QUEUES : Args.nonNegativeInt("--queue", queue, "a queue number, 0 or more");
        NotificationControl c = control();
        String name = strategy.trim();
        if (registered().contains(name)) {
            BoundedWait.until(c::strategies, bound -> bound.contains(name), BoundedWait.TAKE_UP_MILLIS,
                    "the disk manager to take up the strategy '" + name + "'");
        }
        List<QueueCounters> switched = c.setStrategy(disk, strategy, q);
        return json ? JsonShapes.switched(switched) : NotifyText.switched(switched, this::why);
    }

    @Descriptor("list the bound completion-notification strategies and which disks and queues use them")
    public String strategies(
            @Descriptor(JsonShapes.DESCRIPTOR)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json) {
        NotificationControl c = control();
        List<QueueCounters> queues = new ArrayList<>();
        DiskManager d = disks;
        if (d != null) {
            for (DiskInfo info : d.list()) {
                try {
                    queues.addAll(c.counters(info.name()));
                } catch (RuntimeException detachedMeanwhile) {
                    // listed a moment ago, gone now
                }
            }
        }
        return json ? JsonShapes.strategies(c.strategies(), queues)
                : NotifyText.strategies(c.strategies(), queues, providers());
    }

    @Descriptor("per-queue counters of a disk: requests, bytes, kicks and interrupts sent and suppressed, batch "
            + "sizes, in flight, strategy and switches, polling")
    public String stats(
            @Descriptor("JSON instead of a table")
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("disk name") String disk) {
        NotificationControl c = control();
        List<QueueCounters> queues = c.counters(disk);
        List<QueueCounters> exported = c.exportCounters(disk);
        java.util.Map<String, Long> filtered = new java.util.LinkedHashMap<>();
        for (io.kickplug.api.blk.BackendFilter f : filters) {
            filtered.putAll(f.stats(disk));
        }
        List<io.kickplug.api.transport.ExportStatus.DirtyLog> logs = dirtyLogs(disk);
        if (json) {
            String j = NotifyText.statsJson(disk, queues, exported, this::why);
            if (!logs.isEmpty() && j.endsWith("}")) {
                j = j.substring(0, j.length() - 1) + ", " + NotifyText.dirtyLogJson(logs) + "}";
            }
            if (filtered.isEmpty() || !j.endsWith("}")) {
                return j;
            }
            StringBuilder extra = new StringBuilder(",\"filters\":{");
            filtered.forEach((k, v) -> extra.append(extra.charAt(extra.length() - 1) == '{' ? "" : ",")
                    .append('"').append(k).append("\":").append(v));
            return j.substring(0, j.length() - 1) + extra + "}}";
        }
        String text = NotifyText.stats(disk, queues, this::why);
        if (!filtered.isEmpty()) {
            StringBuilder extra = new StringBuilder("\nfilters:");
            filtered.forEach((k, v) -> extra.append(' ').append(k).append('=').append(v));
            text = text + extra;
        }
        text = exported.isEmpty() ? text : text + "\nvhost-user export\n" + NotifyText.stats(disk, exported, this::why);
        return logs.isEmpty() ? text : text + "\n" + NotifyText.dirtyLog(logs);
    }

    private NotificationControl control() {
        return OptionalServices.require(control, "notification control", "io.kickplug.blk");
    }

    /** The names of the strategies registered now. */
    private Set<String> registered() {
        Set<String> names = new TreeSet<>();
        for (Map<String, Object> properties : strategies) {
            if (properties.get(CompletionNotifier.PROPERTY) instanceof String name) {
                names.add(name.trim());
            }
        }
        return names;
    }
}
