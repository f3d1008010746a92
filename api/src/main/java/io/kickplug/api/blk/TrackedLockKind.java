package io.kickplug.api.blk;

import io.kickplug.api.text.Labels;

/**
 * The lock of a disk's tracked-requests list (seed 004: QEMU's reqs_lock).
 */
public enum TrackedLockKind {
    /** A hand-off mutex that parks and queues waiters in order, like a coroutine mutex (CoMutex). */
    YIELDING("yielding"),
    /** A plain mutex (ReentrantLock) around a short critical section (QemuMutex). */
    MUTEX("mutex"),
    /** One list per I/O thread, each with its own lock. */
    SHARDED("sharded");

    private final String label;

    TrackedLockKind(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** Parses a label ("yielding", "mutex", "sharded"), case-insensitive. */
    public static TrackedLockKind parse(String text) {
        return Labels.parse(TrackedLockKind.class, TrackedLockKind::label, text, "tracked lock");
    }
}
