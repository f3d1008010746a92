package io.kickplug.guest.bench;

import io.kickplug.api.notify.QueueCounters;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What a disk's queues did between two readings of their counters: requests, interrupts sent and suppressed, and
 * available-ring notifications (kicks), each summed over the queues, and the notification strategies of the queues
 * that served requests.
 */
record QueueDeltas(long requests, long interruptsSent, long interruptsSuppressed, long kicks, Set<String> strategies) {

    /** {@code after - before}, queue by queue; a queue that {@code before} lacks (or a null one) counts from 0. */
    static QueueDeltas between(List<QueueCounters> before, List<QueueCounters> after) {
        long requests = 0;
        long sent = 0;
        long suppressed = 0;
        long kicks = 0;
        Set<String> strategies = new HashSet<>();
        for (int q = 0; q < after.size(); q++) {
            QueueCounters a = after.get(q);
            QueueCounters b = before != null && q < before.size() ? before.get(q) : null;
            long r = a.requests() - (b == null ? 0 : b.requests());
            requests += r;
            sent += a.interruptsSent() - (b == null ? 0 : b.interruptsSent());
            suppressed += a.interruptsSuppressed() - (b == null ? 0 : b.interruptsSuppressed());
            kicks += a.availNotifications() - (b == null ? 0 : b.availNotifications());
            if (r > 0) {
                strategies.add(a.strategy());
            }
        }
        return new QueueDeltas(requests, sent, suppressed, kicks, Set.copyOf(strategies));
    }
}
