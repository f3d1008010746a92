package io.kickplug.throttle;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;

/** A named set of limits shared by the disks that join it (QEMU's throttle-group). Thread-safe. */
final class ThrottleGroup {

    private final String name;
    private final ThrottleState state;
    private final List<ThrottledBackend> members = new CopyOnWriteArrayList<>();

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

    synchronized ThrottleLimits limits() {
        return state.limits();
    }

    /** New limits, at once: the members' waiting requests are looked at again under them. */
    void configure(ThrottleLimits limits) {
        synchronized (this) {
            state.configure(limits);
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
