package io.kickplug.guest.engine;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The host CPUs the actor threads of a {@link VirtualTime} are pinned to while they are actors ({@link CpuPinning};
 * why one core: there): pins a thread when it enters, gives it its CPU list back when it retires, and counts the
 * threads that took the pin (taskset can be missing or refused).
 */
final class ActorPinning {

    /** The Linux CPU list actor threads are pinned to, or null: no pinning. */
    private volatile String cpus;
    /** Actors whose thread took the pin. */
    private final AtomicInteger pinned = new AtomicInteger();

    /**
     * Pins every actor thread that enters from now on to {@code cpuList}; null: no pinning.
     *
     * @throws IllegalArgumentException when the list does not parse
     */
    void pinTo(String cpuList) {
        if (cpuList != null) {
            CpuPinning.parseList(cpuList);
        }
        this.cpus = cpuList;
    }

    /** How many actor threads took the pin so far. */
    int pinned() {
        return pinned.get();
    }

    /**
     * Pins the current thread, which becomes an actor, when a CPU list is set.
     *
     * @return the thread's CPU list before, to restore when it retires; null when it was not pinned
     */
    String pinCurrentThread() {
        String pin = cpus;
        if (pin != null) {
            String before = CpuPinning.currentThreadAllowedList();
            if (before != null && CpuPinning.pinCurrentThread(pin)) {
                pinned.incrementAndGet();
                return before;
            }
        }
        return null;
    }

    /** The current thread retires: back to {@code before} ({@link #pinCurrentThread}'s answer), if not null. */
    static void unpinCurrentThread(String before) {
        if (before != null) {
            CpuPinning.pinCurrentThread(before); // the thread may live on (an I/O thread after detach)
        }
    }
}
