package io.kickplug.throttle;

import io.kickplug.api.blk.AsyncBlockBackend;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

    Throttles(LongSupplier clock, ScheduledExecutorService timer) {
        this.clock = clock;
        this.timer = timer;
    }

    private ThrottleGroup group(String name) {
        return groups.computeIfAbsent(name, n -> new ThrottleGroup(n, clock));
    }

    /** Every disk goes through a wrapper (unlimited until kp:throttle sets limits on its group). */
    AsyncBlockBackend wrap(String disk, AsyncBlockBackend backend) {
        ThrottledBackend w = new ThrottledBackend(disk, backend, group(groupOfDisk.getOrDefault(disk, disk)), timer);
        wrappers.removeIf(old -> old.disk().equals(disk));
        wrappers.add(w);
        return w;
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
        if (clear || !options.isEmpty()) {
            ThrottleLimits base = clear ? ThrottleLimits.NONE : g.limits();
            g.configure(base.with(options)); // checked first: an invalid set changes nothing
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

    Map<String, Long> stats(String disk) {
        for (ThrottledBackend w : wrappers) {
            if (w.disk().equals(disk)) {
                Map<String, Long> m = new LinkedHashMap<>();
                m.put("throttle_delayed_requests", w.delayedRequests());
                m.put("throttle_delayed_ns", w.delayedNanos());
                m.put("throttle_waiting", (long) w.waiting());
                return m;
            }
        }
        return Map.of();
    }

    /** The bundle stops: the wrappers pass everything through from now on. */
    void passThroughAll() {
        for (ThrottledBackend w : wrappers) {
            w.passThrough();
        }
        wrappers.clear();
    }
}
