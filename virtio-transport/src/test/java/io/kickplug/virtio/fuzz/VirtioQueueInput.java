package io.kickplug.virtio.fuzz;

import java.util.List;

/**
 * One structure-aware fuzz input, shaped like rust-vmm's {@code VirtioQueueInput { descriptors, functions }}:
 * what a hostile driver puts in guest memory, and the sequence of device-queue calls replayed over it.
 *
 * @param size the queue size the driver configures (usually a power of two, sometimes not)
 * @param desc descriptor table address
 * @param avail available ring (driver area) address
 * @param used used ring (device area) address
 * @param eventIdx whether VIRTIO_RING_F_EVENT_IDX is negotiated
 * @param indirect whether VIRTIO_RING_F_INDIRECT_DESC is negotiated
 * @param descriptors the first entries of the descriptor table (the rest stay garbage)
 * @param tables indirect tables written somewhere in memory
 * @param availEntries the first entries of the available ring
 * @param availIdx the initial avail.idx
 * @param availFlags avail.flags (bit 0: VIRTQ_AVAIL_F_NO_INTERRUPT)
 * @param usedEvent used_event (only meaningful with EVENT_IDX)
 * @param functions the operations to replay
 */
record VirtioQueueInput(int size, long desc, long avail, long used, boolean eventIdx, boolean indirect,
        List<Desc> descriptors, List<Table> tables, List<Integer> availEntries, int availIdx, int availFlags,
        int usedEvent, List<Op> functions) {

    /**
     * One descriptor as the driver writes it. When {@code tableRef >= 0} and the input has tables, the address
     * is that of table {@code tableRef % tables.size()}, and a {@code len} of -1 means its exact byte length.
     * A {@code next} of -1 means the following entry of the same table.
     */
    record Desc(long addr, long len, int flags, int next, int tableRef) {
    }

    /** An indirect descriptor table at {@code addr}. */
    record Table(long addr, List<Desc> entries) {
    }

    /** A device-queue operation, or a driver store between two of them. */
    sealed interface Op permits Pop, Push, NeedsNotification, EnableNotification, DisableNotification, HasAvailable,
            Publish, SetAvailEntry, SetAvailFlags, SetUsedEvent {
    }

    /**
     * {@code pop()}; on a chain, read {@code readLen} bytes after skipping {@code readSkip}, then apply the
     * writer operations (all clamped to what the chain holds).
     */
    record Pop(long readSkip, int readLen, List<WriterOp> writes) implements Op {
    }

    /** {@code pushUsed} of popped chain number {@code pick % inFlight} with used len {@code len}. */
    record Push(int pick, int len) implements Op {
    }

    record NeedsNotification() implements Op {
    }

    record EnableNotification() implements Op {
    }

    record DisableNotification() implements Op {
    }

    record HasAvailable() implements Op {
    }

    /** The driver moves avail.idx by {@code delta} (mod 2^16). */
    record Publish(int delta) implements Op {
    }

    /** The driver writes {@code head} into avail ring slot {@code slot % size}. */
    record SetAvailEntry(int slot, int head) implements Op {
    }

    record SetAvailFlags(int flags) implements Op {
    }

    record SetUsedEvent(int value) implements Op {
    }

    /** What the device does with a chain's writer; lengths are clamped to the space left. */
    enum WriterKind { SKIP, BYTES, U8, ZEROES, VIEWS, SPLIT }

    record WriterOp(WriterKind kind, long n) {
    }
}
