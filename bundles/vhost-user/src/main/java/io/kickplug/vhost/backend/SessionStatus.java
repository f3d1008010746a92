package io.kickplug.vhost.backend;

/**
 * What {@code kp:vhost-list} shows of a vhost-user connection; {@code logging} (the device marks its writes in the
 * live-migration dirty log) and {@code pagesMarked} (bits it set that were clear) for {@code kp:stats};
 * {@code pagesCarried}: pages earlier sessions of the export marked and left uncollected, marked in this session's log.
 */
public record SessionStatus(boolean owner, long features, long protocolFeatures, int memoryRegions, long memoryBytes,
        int runningQueues, String pollQueues, long messages, long refusals, long kicks, long interrupts,
        long activations, boolean needsReset, String lastRefusal, boolean logging, long pagesMarked,
        long pagesCarried) {
}
