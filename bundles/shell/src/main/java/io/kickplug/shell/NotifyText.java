package io.kickplug.shell;

import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.QueueCounters;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** Text and JSON of {@code kp:notify}, {@code kp:strategies} and {@code kp:stats}. */
public final class NotifyText {

    private static final String[] STATS_COLUMNS = {"queue", "strategy", "requests", "bytes", "kicks", "kicks-supp",
        "irqs", "irqs-supp", "req/irq", "batches", "in-flight", "switches", "poll-hits", "poll-miss", "poll-us"};

    private NotifyText() {
    }

    /** One line per queue after {@code kp:notify}: strategy in use, and why when it is not the configured one. */
    public static String switched(List<QueueCounters> queues) {
        return switched(queues, name -> null);
    }

    /**
     * As {@link #switched(List)}; {@code why} tells why a configured strategy is not bound (its bundle stopped,
     * uninstalled, ...), or {@code null} when it does not know.
     */
    public static String switched(List<QueueCounters> queues, java.util.function.Function<String, String> why) {
        StringBuilder sb = new StringBuilder();
        for (QueueCounters c : queues) {
            if (sb.length() > 0) {
                sb.append('\n');
            }
            sb.append(c.disk()).append(" queue ").append(c.queue()).append(": ").append(c.strategy());
            if (!c.strategy().equals(c.configured())) {
                String reason = why.apply(c.configured());
                sb.append(" (configured '").append(c.configured()).append("' is not bound")
                        .append(reason == null ? "" : ": " + reason).append("; using ")
                        .append(CompletionNotifier.IMMEDIATE).append(" until it is)");
            }
        }
        return sb.toString();
    }

    /**
     * {@code kp:strategies}: every bound strategy and every configured one, with the queues that use it
     * ("d1:0,1") or are configured to and wait for it.
     */
    public static String strategies(List<String> bound, List<QueueCounters> queues) {
        return strategies(bound, queues, null);
    }

    /**
     * As {@link #strategies(List, List)}, with a column naming the bundle that provides each strategy
     * ({@code providers}: name to "bundle version [id]"), when {@code providers} is not {@code null}.
     */
    public static String strategies(List<String> bound, List<QueueCounters> queues, Map<String, String> providers) {
        Map<String, List<String>> using = new TreeMap<>();
        Map<String, List<String>> waiting = new TreeMap<>();
        bound.forEach(s -> using.put(s, new ArrayList<>()));
        Map<String, Map<String, List<Integer>>> byStrategy = new LinkedHashMap<>();
        Map<String, Map<String, List<Integer>>> waitingBy = new LinkedHashMap<>();
        for (QueueCounters c : queues) {
            byStrategy.computeIfAbsent(c.strategy(), k -> new LinkedHashMap<>())
                    .computeIfAbsent(c.disk(), k -> new ArrayList<>()).add(c.queue());
            if (!c.strategy().equals(c.configured())) {
                waitingBy.computeIfAbsent(c.configured(), k -> new LinkedHashMap<>())
                        .computeIfAbsent(c.disk(), k -> new ArrayList<>()).add(c.queue());
            }
        }
        byStrategy.forEach((s, disks) -> using.computeIfAbsent(s, k -> new ArrayList<>()).addAll(describe(disks)));
        waitingBy.forEach((s, disks) -> waiting.computeIfAbsent(s, k -> new ArrayList<>()).addAll(describe(disks)));
        waiting.keySet().forEach(s -> using.putIfAbsent(s, new ArrayList<>()));
        int width = "strategy".length();
        for (String s : using.keySet()) {
            width = Math.max(width, s.length());
        }
        int bundleWidth = "bundle".length();
        if (providers != null) {
            for (String s : using.keySet()) {
                bundleWidth = Math.max(bundleWidth, provider(providers, s).length());
            }
        }
        String format = providers == null ? "%-" + width + "s  %-8s  %s%s"
                : "%-" + width + "s  %-8s  %-" + bundleWidth + "s  %s";
        StringBuilder sb = new StringBuilder(providers == null
                ? String.format(Locale.ROOT, format, "strategy", "bound", "", "queues (disk:queue,...)")
                : String.format(Locale.ROOT, format, "strategy", "bound", "bundle", "queues (disk:queue,...)"));
        for (Map.Entry<String, List<String>> e : using.entrySet()) {
            String s = e.getKey();
            String state = s.equals(CompletionNotifier.IMMEDIATE) ? "built-in" : bound.contains(s) ? "yes" : "no";
            String text = e.getValue().isEmpty() ? "-" : String.join(" ", e.getValue());
            List<String> w = waiting.get(s);
            if (w != null) {
                text = (e.getValue().isEmpty() ? "" : text + "; ") + "configured, waiting: " + String.join(" ", w);
            }
            sb.append('\n').append(providers == null ? String.format(Locale.ROOT, format, s, state, "", text)
                    : String.format(Locale.ROOT, format, s, state, provider(providers, s), text));
        }
        return sb.toString();
    }

    private static String provider(Map<String, String> providers, String strategy) {
        return strategy.equals(CompletionNotifier.IMMEDIATE) ? "io.kickplug.blk"
                : providers.getOrDefault(strategy, "-");
    }

    private static List<String> describe(Map<String, List<Integer>> disks) {
        List<String> out = new ArrayList<>();
        disks.forEach((disk, qs) -> out.add(disk + ":" + String.join(",", qs.stream().map(String::valueOf).toList())));
        return out;
    }

    /**
     * {@code kp:stats}: one row per queue, then each queue's batch-size histogram. Columns: kicks are
     * available-buffer notifications received, kicks-supp chains that came without a kick of their own,
     * irqs used-buffer notifications sent, irqs-supp decisions the driver's suppression turned into none.
     */
    public static String stats(String disk, List<QueueCounters> queues) {
        return stats(disk, queues, name -> null);
    }

    /** As {@link #stats(String, List)}; {@code why} tells why a configured strategy is not bound, when known. */
    public static String stats(String disk, List<QueueCounters> queues,
            java.util.function.Function<String, String> why) {
        List<String[]> rows = new ArrayList<>();
        rows.add(STATS_COLUMNS);
        for (QueueCounters c : queues) {
            rows.add(new String[] {Integer.toString(c.queue()), c.strategy(), Long.toString(c.requests()),
                Long.toString(c.bytes()), Long.toString(c.availNotifications()), Long.toString(c.availSuppressed()),
                Long.toString(c.interruptsSent()), Long.toString(c.interruptsSuppressed()),
                c.interruptsSent() == 0 ? "-" : String.format(Locale.ROOT, "%.2f",
                        (double) c.requests() / c.interruptsSent()),
                Long.toString(c.batches()), Long.toString(c.inFlight()), Long.toString(c.switches()),
                Long.toString(c.pollHits()), Long.toString(c.pollMisses()), Long.toString(c.pollNanos() / 1000)});
        }
        int[] widths = new int[STATS_COLUMNS.length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                widths[i] = Math.max(widths[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder("disk ").append(disk).append('\n');
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                String cell = i == 1 ? String.format("%-" + widths[i] + "s", r[i])
                        : String.format("%" + widths[i] + "s", r[i]);
                sb.append(i == 0 ? "" : "  ").append(cell);
            }
            sb.append('\n');
        }
        sb.append("batch sizes (used buffers per batch: ").append(String.join(" ", QueueCounters.BATCH_BUCKETS))
                .append(')');
        for (QueueCounters c : queues) {
            sb.append('\n').append("  q").append(c.queue()).append(':');
            List<Long> h = c.batchHistogram();
            for (int i = 0; i < h.size(); i++) {
                sb.append(' ').append(QueueCounters.BATCH_BUCKETS.get(i)).append('=').append(h.get(i));
            }
            if (!c.strategy().equals(c.configured())) {
                String reason = why.apply(c.configured());
                sb.append("  (configured ").append(c.configured()).append(", not bound")
                        .append(reason == null ? "" : ": " + reason).append("; using ")
                        .append(CompletionNotifier.IMMEDIATE).append(')');
            }
        }
        return sb.toString();
    }

    /** {@code kp:stats --json}: {"disk": ..., "queues": [{field: value, ..., "batch_histogram": {...}}]}. */
    public static String statsJson(String disk, List<QueueCounters> queues) {
        return statsJson(disk, queues, List.of());
    }

    /**
     * {@code kp:stats --json} of a disk with a vhost-user export: as {@link #statsJson(String, List)}, plus
     * {@code "vhost_user_export": [...]} (queues in the same form) when {@code exported} is not empty.
     */
    public static String statsJson(String disk, List<QueueCounters> queues, List<QueueCounters> exported) {
        return statsJson(disk, queues, exported, name -> null);
    }

    /**
     * As {@link #statsJson(String, List, List)}; a queue whose configured strategy is not bound has
     * {@code "not_bound_why"} when {@code why} knows (its bundle stopped, uninstalled, ...).
     */
    public static String statsJson(String disk, List<QueueCounters> queues, List<QueueCounters> exported,
            java.util.function.Function<String, String> why) {
        StringBuilder sb = new StringBuilder("{\"disk\": ").append(JsonOut.write(disk)).append(", \"queues\": [");
        queuesJson(sb, queues, why);
        sb.append(']');
        if (!exported.isEmpty()) {
            sb.append(", \"vhost_user_export\": [");
            queuesJson(sb, exported, why);
            sb.append(']');
        }
        return sb.append('}').toString();
    }

    private static void queuesJson(StringBuilder sb, List<QueueCounters> queues,
            java.util.function.Function<String, String> why) {
        for (int i = 0; i < queues.size(); i++) {
            QueueCounters c = queues.get(i);
            sb.append(i == 0 ? "" : ", ").append('{');
            sb.append("\"queue\": ").append(c.queue());
            sb.append(", \"strategy\": ").append(JsonOut.write(c.strategy()));
            sb.append(", \"configured\": ").append(JsonOut.write(c.configured()));
            String reason = c.strategy().equals(c.configured()) ? null : why.apply(c.configured());
            if (reason != null) {
                sb.append(", \"not_bound_why\": ").append(JsonOut.write(reason));
            }
            field(sb, "requests", c.requests());
            field(sb, "bytes", c.bytes());
            field(sb, "avail_notifications", c.availNotifications());
            field(sb, "avail_suppressed", c.availSuppressed());
            field(sb, "interrupts_sent", c.interruptsSent());
            field(sb, "interrupts_suppressed", c.interruptsSuppressed());
            field(sb, "batches", c.batches());
            field(sb, "in_flight", c.inFlight());
            field(sb, "switches", c.switches());
            field(sb, "poll_hits", c.pollHits());
            field(sb, "poll_misses", c.pollMisses());
            field(sb, "poll_ns", c.pollNanos());
            sb.append(", \"batch_histogram\": {");
            List<Long> h = c.batchHistogram();
            for (int b = 0; b < h.size(); b++) {
                sb.append(b == 0 ? "" : ", ").append(JsonOut.write(QueueCounters.BATCH_BUCKETS.get(b))).append(": ")
                        .append(h.get(b));
            }
            sb.append("}}");
        }
    }

    /**
     * {@code kp:stats}' lines on live migration, one per export: whether the device marks its writes in the dirty
     * log now, and the pages it marked since the export began.
     */
    public static String dirtyLog(List<io.kickplug.api.transport.ExportStatus.DirtyLog> logs) {
        StringBuilder sb = new StringBuilder();
        for (io.kickplug.api.transport.ExportStatus.DirtyLog d : logs) {
            sb.append(sb.length() == 0 ? "" : "\n").append(d.kind()).append(" export dirty log (live migration): ")
                    .append(d.logging() ? "logging" : "not logging").append(", ").append(d.pagesMarked())
                    .append(" pages marked");
        }
        return sb.toString();
    }

    /** {@code "dirty_log": [{"kind", "logging", "pages_marked"}]}, one per export, for {@code kp:stats --json}. */
    public static String dirtyLogJson(List<io.kickplug.api.transport.ExportStatus.DirtyLog> logs) {
        StringBuilder sb = new StringBuilder("\"dirty_log\": [");
        for (int i = 0; i < logs.size(); i++) {
            io.kickplug.api.transport.ExportStatus.DirtyLog d = logs.get(i);
            sb.append(i == 0 ? "" : ", ").append("{\"kind\": ").append(JsonOut.write(d.kind()))
                    .append(", \"logging\": ").append(d.logging()).append(", \"pages_marked\": ")
                    .append(d.pagesMarked()).append('}');
        }
        return sb.append(']').toString();
    }

    private static void field(StringBuilder sb, String name, long value) {
        sb.append(", \"").append(name).append("\": ").append(value);
    }
}
