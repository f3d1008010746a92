package io.kickplug.api.poll;

import java.util.List;

/**
 * Device-side polling of one disk.
 *
 * @param disk the disk name
 * @param requested polling was asked for (kp:poll on, or {@code poll=true} in the disk's configuration)
 * @param active a {@link PollPolicy} is bound and the disk's queues poll now
 * @param params the parameters of the disk's poll windows
 * @param queues per virtqueue, the poll counters since the disk was attached (entry q: queue q)
 */
public record PollStatus(String disk, boolean requested, boolean active, PollParams params,
        List<PollCounters> queues) {

    public PollStatus {
        queues = queues == null ? List.of() : List.copyOf(queues);
    }
}
