package io.kickplug.api.iothread;

import org.osgi.annotation.versioning.ProviderType;

/**
 * How a device lock waits, and what its clock reads, on the current thread when that thread runs in virtual time
 * (the simulated guest's {@code --clock virtual}: one thread runs at a time, scheduled by virtual clocks, see
 * docs/seeds.md, "Virtual time"). A thread in real time has none ({@link #current()} is null) and the lock waits on the
 * host as usual. The virtual time installs one on each of its threads (vCPUs and I/O threads), so that a lock the
 * device takes (the tracked-requests lock of seed 004) is held, contended and waited for in virtual time: the lock
 * calls {@link #point()} before it acquires and before it releases, so a thread due while the lock is held finds it
 * held; a contended acquirer {@link #await}s instead of parking, and the releaser {@link #wake}s it.
 */
@ProviderType
public interface VirtualWaits {

    /** Now, on the current thread's virtual clock. */
    long now();

    /** A scheduling point: the CPU time the thread spent so far is charged, and threads due earlier run first. */
    void point();

    /** Blocks in virtual time until {@link #wake} is called for {@code token} (the caller then looks again). */
    void await(Object token);

    /**
     * Waits in virtual time until {@link #wake} is called for {@code token} or {@code timeoutNanos} of virtual time
     * passed, whichever comes first; the thread is busy meanwhile (a spin), and the caller looks again.
     */
    void awaitNanos(Object token, long timeoutNanos);

    /**
     * What {@code iterations} turns of a lock's spin loop ({@code cpu_relax()}, x86 PAUSE, and two reads of the
     * lock) take: measured on this host with measured charging, the model's figure with model charging.
     */
    long spinNanos(int iterations);

    /** Makes the threads waiting for {@code token} runnable, {@code delayNanos} of virtual time from now. */
    void wake(Object token, long delayNanos);

    /**
     * The modelled cost of waking a thread blocked in the kernel (a futex or ppoll wait) from another core: what a
     * waiter that parked pays between its waker's signal and running again.
     */
    long wakeUpNanos();

    /**
     * Charges the modelled cost of one critical section of the tracked-requests list (the list update made with the
     * lock held, on a list that several I/O threads write, whose cache lines therefore move between their cores) to
     * the current thread, under model charging only (measured charging measures the code itself, and this does
     * nothing); called with the lock held, just before the release, so the lock is held for that long in virtual
     * time. docs/seeds.md, "Virtual time", gives the figure's source.
     */
    default void chargeCriticalSection() {
    }

    /**
     * Charges the modelled cost of one coroutine switch (QEMU's {@code qemu_coroutine_yield} or the re-entry of a
     * coroutine) to the current thread, under model charging only: a yielding lock's waiter pays one when it queues
     * (it yields) and one when its thread resumes it after the hand-off.
     */
    default void chargeCoroutineSwitch() {
    }

    /**
     * Charges the modelled cost of scheduling a coroutine on another thread's event loop (QEMU's {@code
     * aio_co_schedule} from {@code aio_co_wake}: an atomic list insert and a bottom half scheduled there) to the
     * current thread, under model charging only: a yielding lock's release that hands the lock to a waiter pays it.
     */
    default void chargeCoroutineSchedule() {
    }

    /**
     * Under model charging, how long a contended mutex acquirer's futex wait takes to reach the kernel's check of the
     * lock word (a system call's entry): a release within that time makes the wait return at once and the acquirer
     * takes the lock without sleeping (glibc's {@code __lll_lock_wait}, QEMU's QemuMutex); 0 under measured charging.
     */
    default long futexWaitNanos() {
        return 0;
    }

    /**
     * Whether the current thread's time is charged by the model (fixed costs, deterministic) rather than measured on
     * the host: a lock that models a host event the model has no figure for (a holder delayed past a spin) asks it.
     */
    default boolean modelCharging() {
        return false;
    }

    /** The current thread's waits, or {@code null} in real time. */
    static VirtualWaits current() {
        // No thread-local lookup on the hot path of a process that never ran in virtual time (a daemon).
        return Holder.installed ? Holder.CURRENT.get() : null;
    }

    /** Installs {@code waits} for the current thread ({@code null} removes them). */
    static void install(VirtualWaits waits) {
        if (waits == null) {
            Holder.CURRENT.remove();
        } else {
            Holder.installed = true; // before the set: this thread's current() sees both
            Holder.CURRENT.set(waits);
        }
    }

    /** Not part of the interface: the per-thread slot. */
    final class Holder {
        static final ThreadLocal<VirtualWaits> CURRENT = new ThreadLocal<>();
        /**
         * Set by the first {@link #install} of waits, never cleared. A plain field is enough: only the thread that
         * installs waits reads them back, and it sees its own write; another thread that reads false has none.
         */
        static boolean installed;

        private Holder() {
        }
    }
}
