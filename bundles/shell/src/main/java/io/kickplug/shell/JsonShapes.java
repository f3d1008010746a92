package io.kickplug.shell;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.transport.ExportStatus;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The documented shapes of {@code --json} (docs/reference/json.md); sizes in bytes, times in nanoseconds,
 * names in snake_case. The control socket returns the same value as its answer's {@code result}.
 */
public final class JsonShapes {

    /** The {@code @Descriptor} of every command's {@code --json} flag. */
    static final String DESCRIPTOR = "JSON instead of text (shape in docs/reference/json.md)";

    private JsonShapes() {
    }

    /** {@code kp:disks --json}: {@code {"disks":[{...,"exports":[{"kind","address","state"}]}]}}. */
    public static String disks(List<DiskInfo> disks, List<ExportStatus.Export> exports) {
        return listOf("disks", disks, d -> disk(d, exports));
    }

    /** One disk of {@code kp:disks --json}, also {@code kp:attach --json} and {@code kp:resize --json}. */
    public static Map<String, Object> disk(DiskInfo d, List<ExportStatus.Export> exports) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", d.name());
        m.put("size_bytes", d.sizeBytes());
        m.put("backend", d.backend());
        m.put("path", d.path());
        m.put("read_only", d.readOnly());
        m.put("transport", d.transport().label());
        m.put("queues", d.numQueues());
        m.put("queue_size", d.queueSize());
        m.put("iothreads", d.ioThreads());
        m.put("mapping", d.mapping());
        m.put("device_status", d.deviceStatus());
        m.put("device_status_text", DeviceStatusText.describe(d.deviceStatus()));
        m.put("requests_completed", d.requestsCompleted());
        m.put("requests_in_flight", d.requestsInFlight());
        m.put("tracked_lock", d.trackedLock().label());
        m.put("ring", d.ring().id());
        List<Object> ex = new ArrayList<>();
        for (ExportStatus.Export e : exports) {
            if (e.disk().equals(d.name())) {
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("kind", e.kind());
                x.put("address", e.address());
                x.put("state", e.state());
                ex.add(x);
            }
        }
        m.put("exports", ex);
        return m;
    }

    /** {@code kp:attach --json} and {@code kp:resize --json}: {@code {"disk":{...as in kp:disks...}}}. */
    public static String oneDisk(DiskInfo d) {
        return JsonOut.write(Map.of("disk", disk(d, List.of())));
    }

    /** {@code kp:detach --json}: {@code {"detached":"d0"}}. */
    public static String detached(String name) {
        return JsonOut.write(Map.of("detached", name));
    }

    /**
     * {@code kp:strategies --json}: {@code {"strategies":[{"name","bound","queues":[{"disk","queue"}],
     * "waiting":[{"disk","queue"}]}]}}; {@code bound} is true for {@code immediate} (built in).
     */
    public static String strategies(List<String> bound, List<QueueCounters> queues) {
        TreeSet<String> names = new TreeSet<>(bound);
        names.add(CompletionNotifier.IMMEDIATE);
        queues.forEach(q -> {
            names.add(q.strategy());
            names.add(q.configured());
        });
        return listOf("strategies", names, s -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", s);
            m.put("bound", s.equals(CompletionNotifier.IMMEDIATE) || bound.contains(s));
            List<Object> using = new ArrayList<>();
            List<Object> waiting = new ArrayList<>();
            for (QueueCounters q : queues) {
                if (q.strategy().equals(s)) {
                    using.add(Map.of("disk", q.disk(), "queue", q.queue()));
                }
                if (q.configured().equals(s) && !q.strategy().equals(s)) {
                    waiting.add(Map.of("disk", q.disk(), "queue", q.queue()));
                }
            }
            m.put("queues", using);
            m.put("waiting", waiting);
            return m;
        });
    }

    /** {@code kp:notify --json}: {@code {"queues":[{"disk","queue","strategy","configured"}]}}. */
    public static String switched(List<QueueCounters> queues) {
        return listOf("queues", queues, q -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("disk", q.disk());
            m.put("queue", q.queue());
            m.put("strategy", q.strategy());
            m.put("configured", q.configured());
            return m;
        });
    }

    /**
     * {@code kp:guest --json}: {@code {"vcpus","exit_latency_ns","inject_latency_ns","kick_policy",
     * "kick_policies":[...],"poll_queues"}}.
     */
    public static String guest(GuestSettings s, List<String> policies) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("vcpus", s.vcpus());
        m.put("exit_latency_ns", s.exitLatencyNs());
        m.put("inject_latency_ns", s.injectLatencyNs());
        m.put("kick_policy", s.kickPolicy());
        m.put("kick_policies", policies);
        m.put("poll_queues", s.pollQueues());
        return JsonOut.write(m);
    }

    /** {@code kp:lockstat --json}: {@code {"locks":[{"name", lock_stat's columns in snake_case, times in ns}]}}. */
    public static String lockstat(List<LockStatRow> rows) {
        return listOf("locks", rows, r -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", r.name());
            m.put("con_bounces", r.conBounces());
            m.put("contentions", r.contentions());
            m.put("waittime_min_ns", r.waittimeMinNs());
            m.put("waittime_max_ns", r.waittimeMaxNs());
            m.put("waittime_total_ns", r.waittimeTotalNs());
            m.put("acq_bounces", r.acqBounces());
            m.put("acquisitions", r.acquisitions());
            m.put("holdtime_min_ns", r.holdtimeMinNs());
            m.put("holdtime_max_ns", r.holdtimeMaxNs());
            m.put("holdtime_total_ns", r.holdtimeTotalNs());
            return m;
        });
    }

    /**
     * {@code kp:io --json}: {@code {"disk","block_size","depth","bytes","requests","elapsed_ns","iops",
     * "mib_per_s","mismatches","interrupts","notifies"}}.
     */
    public static String io(IoPassOptions options, IoPassResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("disk", r.disk());
        m.put("block_size", options.blockSize());
        m.put("depth", options.queueDepth());
        m.put("bytes", r.bytes());
        m.put("requests", r.requests());
        m.put("elapsed_ns", r.elapsedNanos());
        m.put("iops", r.iops());
        m.put("mib_per_s", r.mibPerSecond());
        m.put("mismatches", r.mismatches());
        m.put("interrupts", r.interrupts());
        m.put("notifies", r.notifies());
        return JsonOut.write(m);
    }

    /**
     * {@code kp:poll --json}: {@code {"disk","requested","active","poll_max_ns","queues":[{"queue","hits",
     * "misses","poll_ns"}]}}.
     */
    public static String poll(io.kickplug.api.poll.PollStatus s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("disk", s.disk());
        m.put("requested", s.requested());
        m.put("active", s.active());
        m.put("poll_max_ns", s.params().maxNs());
        List<Object> queues = new ArrayList<>();
        for (int q = 0; q < s.queues().size(); q++) {
            io.kickplug.api.poll.PollCounters c = s.queues().get(q);
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("queue", q);
            x.put("hits", c.hits());
            x.put("misses", c.misses());
            x.put("poll_ns", c.pollNanos());
            queues.add(x);
        }
        m.put("queues", queues);
        return JsonOut.write(m);
    }

    /** {@code kp:tracked-lock --json}: {@code {"disk","tracked_lock"}}. */
    public static String trackedLock(DiskInfo d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("disk", d.name());
        m.put("tracked_lock", d.trackedLock().label());
        return JsonOut.write(m);
    }

    /** {@code kp:ring --json}: {@code {"disk","ring"}}. */
    public static String ring(DiskInfo d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("disk", d.name());
        m.put("ring", d.ring().id());
        return JsonOut.write(m);
    }

    /** {@code {"key":[shape(item), ...]}}: a command's list, one object per item, in order. */
    private static <T> String listOf(String key, Collection<T> items, Function<T, Map<String, Object>> shape) {
        List<Object> list = new ArrayList<>(items.size());
        for (T item : items) {
            list.add(shape.apply(item));
        }
        return JsonOut.write(Map.of(key, list));
    }
}
