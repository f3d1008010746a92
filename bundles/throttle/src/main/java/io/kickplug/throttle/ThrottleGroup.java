package io.kickplug.throttle;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;

/** A named set of limits shared by the disks that join it (QEMU's throttle-group). Thread-safe. */
final class ThrottleGroup {

    private final String name;
    private final ThrottleState state;
    private final List<ThrottledBackend> members = new CopyOnWriteArrayList<>();
    /**
     * Whether any bucket has a limit; written under the lock by {@link #configure}, read without it by a member's
     * submit: an unlimited group admits every request without a wait, so its members skip the group's lock, clock
     * and buckets (the levels start from empty when limits are set again, so the skipped accounting is not owed).
     */
    private volatile boolean limited;

    ThrottleGroup(String name, LongSupplier clock) {
        this.name = name;
        this.state = new ThrottleState(clock);
    }

    String name() {
        return name;
    }

    synchronized long admit(boolean write, long bytes) {
        return state.admit(write, bytes);
    }

    /** Whether any limit is set (no lock: a volatile read). */
    boolean limited() {
        return limited;
    }

    synchronized ThrottleLimits limits() {
        return state.limits();
    }

    /** New limits, at once: the members' waiting requests are looked at again under them. */
    void configure(ThrottleLimits limits) {
        synchronized (this) {
            state.configure(limits);
            limited = limits.any();
        }
        for (ThrottledBackend m : members) {
            m.release();
        }
    }

    void join(ThrottledBackend member) {
        members.add(member);
    }

    void leave(ThrottledBackend member) {
        members.remove(member);
    }

    List<ThrottledBackend> members() {
        return members;
    }
}
