package io.kickplug.blk.manager;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.virtio.RingFormat;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The settings of a disk that a user changes while it runs ({@code kp:notify}, {@code kp:poll},
 * {@code kp:tracked-lock}, {@code kp:ring}, {@code kp:resize}), as its configuration keeps them: the disk manager
 * writes them there when they are made, and applies them again when the disk is rebuilt from its configuration
 * (a bundle came back, the runtime was started again with its state folder). Each one has a live path, so a
 * configuration that differs from the running disk only in these properties is applied without a re-attach.
 *
 * <p>Properties: {@code notify.strategy} and {@code notify.queues} ({@link QueueStrategies}), {@code poll},
 * {@code poll.max.ns}, {@code poll.grow} and {@code poll.shrink} ({@link PollParams}), {@code tracked.lock},
 * {@code ring} and {@code size}. The throttle bundle keeps its own ({@code throttle.*}) in the same
 * configuration.
 *
 * @param strategies the completion-notification strategy of each queue
 * @param poll device-side polling asked for
 * @param pollParams the poll windows' parameters
 * @param trackedLock the tracked-requests lock
 * @param ring the virtqueue format offered
 * @param sizeBytes the disk's size; 0 when the configuration leaves it to the backend (a file's own size)
 */
public record DiskSettings(QueueStrategies strategies, boolean poll, PollParams pollParams,
        TrackedLockKind trackedLock, RingFormat ring, long sizeBytes) {

    public static final String NOTIFY_QUEUES = "notify.queues";
    public static final String POLL = "poll";
    public static final String POLL_MAX_NS = "poll.max.ns";
    public static final String POLL_GROW = "poll.grow";
    public static final String POLL_SHRINK = "poll.shrink";
    public static final String TRACKED_LOCK = "tracked.lock";
    public static final String RING = "ring";
    public static final String SIZE = "size";
    /** The properties of these settings. */
    public static final Set<String> KEYS = Set.of(DiskConfig.NOTIFY_STRATEGY, NOTIFY_QUEUES, POLL, POLL_MAX_NS,
            POLL_GROW, POLL_SHRINK, TRACKED_LOCK, RING, SIZE);

    /**
     * The settings of a disk configuration; absent properties are the defaults a new disk has.
     *
     * @throws DiskException naming the property that is malformed
     */
    public static DiskSettings of(Map<String, ?> props) {
        QueueStrategies strategies;
        try {
            strategies = QueueStrategies.parse(DiskConfig.notifyStrategy(props),
                    DiskConfig.string(props, NOTIFY_QUEUES, ""));
        } catch (DiskException e) {
            throw e.getMessage().startsWith("disk configuration property") ? e
                    : new DiskException("disk configuration property '" + NOTIFY_QUEUES + "': " + e.getMessage());
        }
        DiskConfig.Polling polling = DiskConfig.polling(props);
        String disk = DiskConfig.string(props, "name", "?");
        return new DiskSettings(strategies, polling.enabled(), polling.params(),
                DiskConfig.parsed(props, disk, TRACKED_LOCK, "mutex", t -> TrackedLockKind.parse(t.trim())),
                DiskConfig.parsed(props, disk, RING, "split", RingFormat::parse),
                DiskConfig.size(props, SIZE, 0));
    }

    /** These settings as configuration properties; {@code size} only when not 0. */
    public Map<String, Object> toProperties() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put(DiskConfig.NOTIFY_STRATEGY, strategies.all());
        p.put(NOTIFY_QUEUES, strategies.formatPerQueue());
        p.put(POLL, poll);
        p.put(POLL_MAX_NS, pollParams.maxNs());
        p.put(POLL_GROW, pollParams.grow());
        p.put(POLL_SHRINK, pollParams.shrink());
        p.put(TRACKED_LOCK, trackedLock.label());
        p.put(RING, ring.id());
        if (sizeBytes != 0) {
            p.put(SIZE, Long.toString(sizeBytes));
        }
        return p;
    }

    /**
     * Whether a disk running with {@code live} has these settings: all equal, a size of 0 matching any size (the
     * backend decides it).
     */
    public boolean satisfiedBy(DiskSettings live) {
        return strategies.equals(live.strategies) && poll == live.poll && pollParams.equals(live.pollParams)
                && trackedLock == live.trackedLock && ring == live.ring
                && (sizeBytes == 0 || sizeBytes == live.sizeBytes);
    }

    /**
     * {@code config} with these settings written in: unchanged when its settings are {@link #satisfiedBy} these;
     * {@code size} is written only where the configuration has one or the backend does not size itself (a file
     * disk without a size keeps taking its image's).
     */
    public Map<String, Object> recordedIn(Map<String, ?> config) {
        Map<String, Object> next = new LinkedHashMap<>(config);
        DiskSettings before;
        try {
            before = of(config);
        } catch (DiskException e) {
            before = null; // malformed: written over
        }
        if (before != null && before.satisfiedBy(this)) {
            return next;
        }
        Map<String, Object> mine = toProperties();
        Object size = config.get(SIZE);
        String kind = DiskConfig.string(config, "backend", config.get("file") != null ? "file" : "memory").trim();
        if ((size == null || size.toString().isBlank()) && DiskConfig.sizedByBackend(kind)) {
            mine.remove(SIZE);
        }
        if (strategies.perQueue().isEmpty()) {
            next.remove(NOTIFY_QUEUES);
            mine.remove(NOTIFY_QUEUES);
        }
        next.putAll(mine);
        return next;
    }

    /**
     * What of a configuration needs a re-attach when it changes: the properties a disk is attached with
     * ({@link DiskConfig#PROPERTIES}, in either spelling: {@code queue.size} or the metatype's {@code queue_size})
     * but these settings. Other bundles' properties (the throttle bundle's {@code throttle.*}) and the ones
     * ConfigAdmin and SCR add are not among them.
     */
    public static Map<String, Object> base(Map<String, ?> props) {
        Map<String, Object> rest = new HashMap<>();
        props.forEach((k, v) -> {
            String key = k.replace('_', '.');
            if (DiskConfig.PROPERTIES.contains(key) && !KEYS.contains(key)) {
                rest.put(k, v);
            }
        });
        return rest;
    }
}
