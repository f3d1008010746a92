package io.kickplug.guest.engine;

/**
 * What the virtual hardware costs a vCPU: a notify (the QueueNotify or notify-region write, a VM exit) and an
 * interrupt injection are busy-waits on the vCPU thread until the configured latency has passed since they
 * began ({@link MachineConfig#exitLatencyNs()}, {@link MachineConfig#injectLatencyNs()}).
 */
final class CostModel {
    private final long exitNs;
    private final long injectNs;

    CostModel(MachineConfig config) {
        this.exitNs = config.exitLatencyNs();
        this.injectNs = config.injectLatencyNs();
    }

    /** After a notify that began at {@code t0}: spins out the exit latency; returns the nanoseconds it took. */
    long exitFrom(long t0) {
        spinUntil(t0 + exitNs);
        return System.nanoTime() - t0;
    }

    /** Spins out the injection latency; returns the nanoseconds it took. */
    long inject() {
        long t0 = System.nanoTime();
        spinUntil(t0 + injectNs);
        return System.nanoTime() - t0;
    }

    /** Busy-waits until {@code deadline} (System.nanoTime based); the cost model, not a test wait. */
    static void spinUntil(long deadline) {
        while (System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
    }
}
