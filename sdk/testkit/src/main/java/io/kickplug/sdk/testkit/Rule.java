package io.kickplug.sdk.testkit;

/**
 * A rule a plugin must keep, with the VIRTIO 1.2 section (or the api type) it comes from. A broken rule fails the
 * plugin's contract test with a {@link ContractViolation} naming both.
 */
public enum Rule {

    // Notification strategies (io.kickplug.api.notify.CompletionNotifier).
    NO_LOST_NOTIFICATION("every used buffer pushed is followed by a decision, and every notification owed is sent "
            + "once the I/O thread is idle (or within the strategy's declared delay)",
            "VIRTIO 1.2 section 2.7.7.2 (used buffer notification); CompletionNotifier"),
    NO_CALL_AFTER_DETACH("after detach a strategy makes no decision and sends nothing for the queue (a late "
            + "notification would be a duplicate of the new strategy's)",
            "VIRTIO 1.2 section 2.7.7.2; CompletionNotifier.detach"),
    QUEUE_ON_IO_THREAD("a strategy calls its queue's decision and send methods on the queue's I/O thread only",
            "CompletionNotifier.Queue (I/O thread only)"),
    EVERY_REQUEST_COMPLETES("every request the driver makes completes once and its used buffer notification "
            + "arrives, so fio verify passes with the exact I/O count",
            "VIRTIO 1.2 sections 2.7.13 (supplying buffers), 2.7.14 (receiving used buffers), 5.2.6"),

    // Backends (io.kickplug.api.blk.BlockBackend, AsyncBlockBackend, BackendFactory).
    COMPLETED_EXACTLY_ONCE("a backend completes each operation exactly once", "VIRTIO 1.2 section 5.2.6 "
            + "(the device writes one status per request); AsyncBlockBackend.submit"),
    ERROR_AS_STATUS("a failed operation reports an IOException (the device answers VIRTIO_BLK_S_IOERR), never "
            + "an unchecked exception or a hang", "VIRTIO 1.2 section 5.2.6.1"),
    FLUSH_ORDER("a FLUSH completes after the writes completed before it, and they read back after it",
            "VIRTIO 1.2 section 5.2.6 (VIRTIO_BLK_T_FLUSH), 5.2.6.2"),
    BOUNDS_REFUSED("an operation beyond the backend's size is refused", "VIRTIO 1.2 section 5.2.6.2"),
    READ_ONLY_REFUSED("a read-only backend refuses writes, write-zeroes and discards",
            "VIRTIO 1.2 section 5.2.6.2 (VIRTIO_BLK_F_RO)"),
    DATA_INTACT("what is written reads back unchanged", "VIRTIO 1.2 section 5.2.6"),

    // Filters (io.kickplug.api.blk.BackendFilter).
    FILTER_TRANSPARENT("a filter passes data through unchanged (fio verify through it)", "BackendFilter.wrap; "
            + "VIRTIO 1.2 section 5.2.6"),
    FILTER_PASSES_ERRORS("a filter passes the backend's errors through", "VIRTIO 1.2 section 5.2.6.1; "
            + "BackendFilter"),
    FILTER_KEEPS_FLUSH_ORDER("a filter completes a FLUSH only after the writes completed before it",
            "VIRTIO 1.2 section 5.2.6 (VIRTIO_BLK_T_FLUSH)"),

    // Poll policies (io.kickplug.api.poll.PollPolicy, PollWindow).
    WINDOW_IN_BOUNDS("a poll window stays within 0 and poll-max-ns", "PollWindow.pollNs; PollParams.maxNs"),
    POLLING_STOPS("a window starts at 0 and goes back to 0 when the policy stops polling (poll-max-ns 0, or "
            + "waits far longer than poll-max-ns)", "PollPolicy.newWindow; PollParams");

    private final String text;
    private final String section;

    Rule(String text, String section) {
        this.text = text;
        this.section = section;
    }

    /** What the rule says. */
    public String text() {
        return text;
    }

    /** Where it comes from: the VIRTIO section and/or the api type. */
    public String section() {
        return section;
    }
}
