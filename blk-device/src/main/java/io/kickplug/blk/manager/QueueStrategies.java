package io.kickplug.blk.manager;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.blk.notify.NotifierRegistry;
import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.StringJoiner;
import java.util.TreeMap;

/**
 * The completion-notification strategy a user set for each queue of a disk: one for every queue ({@code kp:notify
 * d0 bh}), and exceptions for single queues ({@code kp:notify --queue 1 d0 defer-call}). A queue index may reach
 * past the disk's own queues: such an exception configures the queue of the disk's vhost-user export, which can
 * have more queues than the disk. Kept in the disk's configuration as {@code notify.strategy} and
 * {@code notify.queues} ("1=defer-call,3=bh").
 *
 * @param all the strategy of every queue without an exception
 * @param perQueue the exceptions, by queue index (0 to {@link DiskSpec#MAX_QUEUES} - 1); never one equal to
 *     {@code all}
 */
public record QueueStrategies(String all, SortedMap<Integer, String> perQueue) {

    /** Every queue on the built-in strategy. */
    public static final QueueStrategies IMMEDIATE = new QueueStrategies(CompletionNotifier.IMMEDIATE, new TreeMap<>());

    public QueueStrategies {
        all = NotifierRegistry.checkName(all);
        TreeMap<Integer, String> copy = new TreeMap<>();
        for (Map.Entry<Integer, String> e : perQueue.entrySet()) {
            checkQueue(e.getKey());
            String name = NotifierRegistry.checkName(e.getValue());
            if (!name.equals(all)) {
                copy.put(e.getKey(), name);
            }
        }
        perQueue = Collections.unmodifiableSortedMap(copy);
    }

    /** The strategy of queue {@code queue}. */
    public String of(int queue) {
        return perQueue.getOrDefault(queue, all);
    }

    /**
     * What {@code kp:notify} leaves: {@code strategy} on queue {@code queue}, or on every queue (the exceptions
     * dropped) when {@code queue} is negative.
     */
    public QueueStrategies with(String strategy, int queue) {
        String name = NotifierRegistry.checkName(strategy);
        if (queue < 0) {
            return new QueueStrategies(name, new TreeMap<>());
        }
        TreeMap<Integer, String> next = new TreeMap<>(perQueue);
        next.put(queue, name);
        return new QueueStrategies(all, next);
    }

    /** The exceptions as {@code notify.queues} writes them: "1=defer-call,3=bh", empty for none. */
    public String formatPerQueue() {
        StringJoiner j = new StringJoiner(",");
        perQueue.forEach((q, s) -> j.add(q + "=" + s));
        return j.toString();
    }

    /**
     * Parses {@code notify.queues} ("1=defer-call, 3=bh"; blank for none) on top of {@code all}.
     *
     * @throws DiskException naming what is wrong
     */
    public static QueueStrategies parse(String all, String perQueue) {
        TreeMap<Integer, String> map = new TreeMap<>();
        if (perQueue != null && !perQueue.isBlank()) {
            for (String item : perQueue.split(",")) {
                String[] kv = item.split("=", 2);
                if (kv.length != 2) {
                    throw new DiskException("'" + item.trim() + "' is not QUEUE=STRATEGY");
                }
                int queue;
                try {
                    queue = Integer.parseInt(kv[0].trim());
                } catch (NumberFormatException e) {
                    throw new DiskException("'" + kv[0].trim() + "' is not a queue number");
                }
                checkQueue(queue);
                if (map.put(queue, kv[1].trim()) != null) {
                    throw new DiskException("queue " + queue + " is named twice");
                }
            }
        }
        return new QueueStrategies(all, map);
    }

    private static void checkQueue(int queue) {
        if (queue < 0 || queue >= DiskSpec.MAX_QUEUES) {
            throw new DiskException("queue " + queue + " is not in 0.." + (DiskSpec.MAX_QUEUES - 1));
        }
    }
}
