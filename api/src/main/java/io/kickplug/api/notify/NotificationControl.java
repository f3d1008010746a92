package io.kickplug.api.notify;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Service of the block device: which completion-notification strategy each queue of each disk uses, and
 * the per-queue counters ({@code kp:notify}, {@code kp:strategies}, {@code kp:stats}).
 */
@ProviderType
public interface NotificationControl {

    /** Pass as {@code queue} to mean every queue of the disk. */
    int ALL_QUEUES = -1;

    /**
     * Configures {@code strategy} for queue {@code queue} of {@code disk} (or all of them). A queue switches at
     * its next safe point on its I/O thread, within one loop iteration; when no service of that name is
     * bound it uses {@value CompletionNotifier#IMMEDIATE} until one is.
     *
     * @return the counters of the affected queues after the call (the switch may still be pending)
     * @throws io.kickplug.api.blk.DiskException for an unknown disk or queue, or a malformed strategy name
     */
    List<QueueCounters> setStrategy(String disk, String strategy, int queue);

    /** Names of the strategies bound now, {@value CompletionNotifier#IMMEDIATE} included, sorted. */
    List<String> strategies();

    /**
     * The counters of every queue of {@code disk}.
     *
     * @throws io.kickplug.api.blk.DiskException for an unknown disk
     */
    List<QueueCounters> counters(String disk);

    /**
     * The counters of the queues of {@code disk}'s exported devices (vhost-user), in export order; empty when
     * the disk is not exported.
     *
     * @throws io.kickplug.api.blk.DiskException for an unknown disk
     */
    default List<QueueCounters> exportCounters(String disk) {
        return List.of();
    }
}
