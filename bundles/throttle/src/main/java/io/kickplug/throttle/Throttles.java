package io.kickplug.throttle;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.command.OptionTable;
import io.kickplug.throttle.ThrottledBackend.Delays;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;

/**
 * The throttle groups and which disk is in which (a disk is in the group of its own name until {@code --group}
 * moves it), the wrappers of the attached disks, and {@code kp:throttle}'s logic. Plain class: the DS component
 * ({@link ThrottleComponent}) adds the wiring.
 */
final class Throttles {

    private final LongSupplier clock;
    private final ScheduledExecutorService timer;
    private final Map<String, ThrottleGroup> groups = new ConcurrentHashMap<>();
    private final Map<String, String> groupOfDisk = new ConcurrentHashMap<>();
    private final List<ThrottledBackend> wrappers = new CopyOnWriteArrayList<>();
    /** Disks whose saved settings were applied (at their first wrap in this bundle's life). */
    private final Set<String> loaded = ConcurrentHashMap.newKeySet();
    /** Groups whose limits were set in this bundle's life (by kp:throttle or a disk's saved settings). */
    private final Set<String> configured = ConcurrentHashMap.newKeySet();
    private final ThrottleStore store;
    /** Delayed requests and nanoseconds of the disks' retired wrappers, so kp:stats keeps counting across them. */
    private final Map<String, Delays> retired = new ConcurrentHashMap<>();

    Throttles(LongSupplier clock, ScheduledExecutorService timer) {
        this(clock, timer, ThrottleStore.NONE);
    }

    Throttles(LongSupplier clock, ScheduledExecutorService timer, ThrottleStore store) {
        this.clock = clock;
        this.timer = timer;
        this.store = store;
    }

    private ThrottleGroup group(String name) {
        return groups.computeIfAbsent(name, n -> new ThrottleGroup(n, clock));
    }

    /**
     * Every disk goes through a wrapper (unlimited until kp:throttle sets limits on its group). At a disk's first
     * wrap in this bundle's life its saved settings (group, limits) apply: after a restart of the bundle or of the
     * runtime the disk is throttled as before. A group's limits saved with several disks are taken once.
     */
    synchronized AsyncBlockBackend wrap(String disk, AsyncBlockBackend backend) {
        if (loaded.add(disk)) {
            applySaved(disk);
        }
        ThrottledBackend w = new ThrottledBackend(disk, backend, group(groupOfDisk.getOrDefault(disk, disk)), timer);
        w.onClose(() -> {
            wrappers.remove(w);
            Delays d = w.delays(); // a closed wrapper has let go of what waited
            retired.merge(disk, new Delays(d.requests(), d.nanos(), 0), Delays::plus);
        });
        wrappers.add(w);
        return w;
    }

    private void applySaved(String disk) {
        Map<String, String> saved = new LinkedHashMap<>(store.load(disk));
        if (saved.isEmpty()) {
            return;
        }
        String groupName = saved.remove("group");
        if (groupName != null && groupName.matches("[A-Za-z0-9._-]+")) {
            groupOfDisk.put(disk, groupName);
        }
        String g = groupOfDisk.getOrDefault(disk, disk);
        if (!saved.isEmpty() && configured.add(g)) {
            try {
                group(g).configure(ThrottleLimits.NONE.with(saved));
            } catch (IllegalArgumentException e) {
                configured.remove(g);
                System.getLogger(Throttles.class.getName()).log(System.Logger.Level.ERROR, "disk " + disk
                        + ": saved throttle limits not applied: " + e.getMessage());
            }
        }
    }

    /** Saves the settings of every disk in group {@code g} (so each of them brings the limits back). */
    private void save(String disk, ThrottleGroup g) {
        java.util.Set<String> members = new java.util.TreeSet<>();
        members.add(disk);
        groupOfDisk.forEach((d, name) -> {
            if (name.equals(g.name())) {
                members.add(d);
            }
        });
        for (String d : members) {
            if (!groupOfDisk.getOrDefault(d, d).equals(g.name())) {
                continue;
            }
            Map<String, String> settings = new LinkedHashMap<>();
            String own = groupOfDisk.get(d);
            if (own != null && !own.equals(d)) {
                settings.put("group", own);
            }
            g.limits().describe().forEach((k, v) -> settings.put(k, Long.toString(v)));
            store.save(d, settings);
        }
    }

    /** kp:throttle's options after the disk: its group, {@code --clear}, and every limit ({@link ThrottleLimits}). */
    static final OptionTable OPTIONS = options();

    private static OptionTable options() {
        List<OptionTable.Option> options = new ArrayList<>();
        options.add(OptionTable.Option.valued("--group", "G", "the disk's name", "move the disk into throttle group "
                + "G, whose limits its requests then share with the group's other disks"));
        options.add(OptionTable.Option.flag("--clear", "remove every limit of the group before applying the others"));
        options.addAll(ThrottleLimits.OPTIONS);
        return new OptionTable("DISK [options]", "each option is --NAME VALUE or --NAME=VALUE; the group and limits "
                + "are saved in the disk's configuration, so they outlive this bundle and the runtime", options);
    }

    /** kp:throttle's arguments that put a disk into {@code group} with exactly {@code limits}. */
    static List<String> arguments(String group, Map<String, Long> limits) {
        List<String> args = new ArrayList<>(List.of("--group", group, "--clear"));
        limits.forEach((k, v) -> args.add("--" + k + "=" + v));
        return args;
    }

    /** kp:throttle: sets the disk's group and limits; returns the group's limits and the disk's counters. */
    synchronized String configure(String disk, List<String> args) {
        Map<String, String> options = new LinkedHashMap<>();
        String groupName = null;
        boolean clear = false;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected '" + a + "' (options are --NAME=VALUE or --NAME VALUE)");
            }
            String key = a.substring(2);
            String value;
            int eq = key.indexOf('=');
            if (eq >= 0) {
                value = key.substring(eq + 1);
                key = key.substring(0, eq);
            } else if (key.equals("clear")) {
                clear = true;
                continue;
            } else {
                if (i + 1 >= args.size()) {
                    throw new IllegalArgumentException("--" + key + " needs a value");
                }
                value = args.get(++i);
            }
            if (key.equals("group")) {
                groupName = value;
            } else {
                options.put(key, value);
            }
        }
        if (groupName != null) {
            if (!groupName.matches("[A-Za-z0-9._-]+")) {
                throw new IllegalArgumentException("group name '" + groupName + "' (letters, digits, '.', '_', '-')");
            }
            groupOfDisk.put(disk, groupName);
            ThrottleGroup g = group(groupName);
            for (ThrottledBackend w : wrappers) {
                if (w.disk().equals(disk)) {
                    w.moveTo(g);
                }
            }
        }
        ThrottleGroup g = group(groupOfDisk.getOrDefault(disk, disk));
        loaded.add(disk); // settings given now replace what was saved
        if (clear || !options.isEmpty()) {
            ThrottleLimits base = clear ? ThrottleLimits.NONE : g.limits();
            g.configure(base.with(options)); // checked first: an invalid set changes nothing
            configured.add(g.name());
        }
        if (clear || !options.isEmpty() || groupName != null) {
            save(disk, g);
        }
        return describe(disk);
    }

    String describe(String disk) {
        ThrottleGroup g = group(groupOfDisk.getOrDefault(disk, disk));
        StringBuilder out = new StringBuilder();
        out.append("disk ").append(disk).append(": throttle group ").append(g.name()).append(", limits ");
        Map<String, Long> limits = g.limits().describe();
        out.append(limits.isEmpty() ? "none" : limits.toString().replace("{", "").replace("}", ""));
        Map<String, Long> s = stats(disk);
        if (!s.isEmpty()) {
            out.append("; delayed ").append(s.get("throttle_delayed_requests")).append(" requests, ")
                    .append(String.format("%.1f", s.get("throttle_delayed_ns") / 1e6)).append(" ms in total, ")
                    .append(s.get("throttle_waiting")).append(" waiting now");
        }
        boolean attached = wrappers.stream().anyMatch(w -> w.disk().equals(disk));
        if (!attached) {
            out.append(" (the disk is not attached through the throttle filter: limits apply when it is attached)");
        }
        return out.toString();
    }

    /** The disk's counters, summed over its wrappers (its own device's and its exported devices'). */
    Map<String, Long> stats(String disk) {
        Delays sum = retired.get(disk);
        for (ThrottledBackend w : wrappers) {
            if (w.disk().equals(disk)) {
                sum = sum == null ? w.delays() : sum.plus(w.delays());
            }
        }
        if (sum == null) {
            return Map.of();
        }
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("throttle_delayed_requests", sum.requests());
        m.put("throttle_delayed_ns", sum.nanos());
        m.put("throttle_waiting", sum.waiting());
        return m;
    }

    /** The bundle stops: the wrappers pass everything through from now on. */
    void passThroughAll() {
        for (ThrottledBackend w : wrappers) {
            w.passThrough();
        }
        wrappers.clear();
    }
}
