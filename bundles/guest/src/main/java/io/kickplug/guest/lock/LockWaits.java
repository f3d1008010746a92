package io.kickplug.guest.lock;

/**
 * How a contended {@link SpinLock} waits and what its clock reads on the current thread. A vCPU of a machine
 * in real time has none (the lock spins and reads {@link System#nanoTime()}); a vCPU of a machine in virtual
 * time installs one for its thread, so that a waiter waits, and the statistics count, in virtual time.
 */
public interface LockWaits {

    /** Now, on the current thread's clock. */
    long now();

    /** Waits until {@link #released} is called for {@code lock} (the caller then tries again). */
    void await(Object lock);

    /** {@code lock} was released: the threads waiting for it may try again. */
    void released(Object lock);

    /** The current thread's waits, or {@code null} for real time. */
    static LockWaits current() {
        return Holder.CURRENT.get();
    }

    /** Installs {@code waits} for the current thread ({@code null} removes them). */
    static void install(LockWaits waits) {
        if (waits == null) {
            Holder.CURRENT.remove();
        } else {
            Holder.CURRENT.set(waits);
        }
    }

    /** Not part of the interface: the per-thread slot. */
    final class Holder {
        static final ThreadLocal<LockWaits> CURRENT = new ThreadLocal<>();

        private Holder() {
        }
    }
}
