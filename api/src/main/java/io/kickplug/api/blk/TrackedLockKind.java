package io.kickplug.api.blk;

import io.kickplug.api.text.Labels;

/**
 * The lock of a disk's tracked-requests list (seed 004: QEMU's reqs_lock).
 */
public enum TrackedLockKind {
    /** A hand-off mutex that parks and queues waiters in order, like a coroutine mutex (CoMutex). */
    YIELDING,
    /** A plain mutex (ReentrantLock) around a short critical section (QemuMutex). */
    MUTEX,
    /** One list per I/O thread, each with its own lock. */
    SHARDED;

    /** The name used by commands and configurations: {@code yielding}, {@code mutex} or {@code sharded}. */
    public String label() {
        return Labels.of(this);
    }

    /** Parses a label ("yielding", "mutex", "sharded"), case-insensitive. */
    public static TrackedLockKind parse(String text) {
        return Labels.parse(TrackedLockKind.class, TrackedLockKind::label, text, "tracked lock");
    }
}
