package io.kickplug.guest.engine;

import io.kickplug.guest.engine.VirtualTime.Actor;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * What the work an actor of a {@link VirtualTime} did costs on its clock, apart from the scheduling: with
 * {@link Charging#MEASURED} the host CPU time of the code it ran since its last scheduling point (the thread's CPU
 * clock, less the cost of reading it, with a count of the slices too long to be the code's own); with
 * {@link Charging#MODEL} the model's per-request device cost of the requests the device completed since the
 * actor's last device charge, and the model's spin iteration. The marks these charges start from live on the actor.
 */
final class ActorCharges {

    private final Charging charging;
    private final ModelCosts costs;
    /** The running thread's CPU clock in ns; the host's thread CPU clock except in tests. */
    private final LongSupplier cpuClock;
    /** What one reading of {@link #cpuClock} costs, taken off every measured charge. */
    private final long cpuReadCostNs;
    private final AtomicLong longSlices = new AtomicLong();
    private final AtomicLong longSliceNanos = new AtomicLong();
    /** Measured charging: what the guest's code (vCPUs outside an exit) took, slices up to the long-slice bound. */
    private final AtomicLong guestNanos = new AtomicLong();
    /** Measured charging: what the device's code (I/O threads, a vCPU in an exit) took, the same way. */
    private final AtomicLong deviceNanos = new AtomicLong();
    /** Requests the device completed so far (used-ring entries), for the model's device cost; set at boot. */
    private volatile LongSupplier deviceWork = () -> 0;
    /**
     * The device's completed-request count when an actor last collected it ({@link #collectWork}): what was completed
     * since then was completed by the actor that holds the baton now. Written by the running actor only.
     */
    private long workSeen;

    ActorCharges(Charging charging, ModelCosts costs, LongSupplier cpuClock, long cpuReadCostNs) {
        if (cpuReadCostNs < 0) {
            throw new IllegalArgumentException("cpuReadCostNs must not be negative: " + cpuReadCostNs);
        }
        this.cpuClock = Objects.requireNonNull(cpuClock, "cpuClock");
        this.cpuReadCostNs = cpuReadCostNs;
        this.charging = Objects.requireNonNull(charging, "charging");
        this.costs = Objects.requireNonNull(costs, "costs");
    }

    /** Measured charging: folds the CPU time {@code a} spent since its mark, less this reading's cost, into its clock. */
    void chargeCpu(Actor a) {
        if (charging == Charging.MEASURED) {
            long c = cpuClock.getAsLong();
            long slice = Math.max(0, c - a.cpuMark - cpuReadCostNs);
            if (slice > VirtualTime.LONG_SLICE_NS) {
                longSlices.incrementAndGet();
                longSliceNanos.addAndGet(slice);
            } else if (a.guest && !a.inExit) {
                guestNanos.addAndGet(slice);
            } else {
                deviceNanos.addAndGet(slice);
            }
            a.clock += slice;
            a.cpuMark = c;
        }
    }

    /** Measured charging: {@code a} starts a turn, its CPU time counts from now. */
    void markCpu(Actor a) {
        if (charging == Charging.MEASURED) {
            a.cpuMark = cpuClock.getAsLong();
        }
    }

    /** Measured slices longer than {@link VirtualTime#LONG_SLICE_NS} charged so far. */
    long longSlices() {
        return longSlices.get();
    }

    /** What those slices charged in all, ns. */
    long longSliceNanos() {
        return longSliceNanos.get();
    }

    /** Measured charging: the guest's code's CPU time so far, long slices left out (0 under model charging). */
    long guestNanos() {
        return guestNanos.get();
    }

    /** Measured charging: the device's code's CPU time so far, long slices left out (0 under model charging). */
    long deviceNanos() {
        return deviceNanos.get();
    }

    /** Where the device's completed-request count comes from (read from now on). */
    void deviceWork(LongSupplier work) {
        this.deviceWork = Objects.requireNonNull(work, "work");
        if (charging == Charging.MODEL) {
            workSeen = work.getAsLong();
        }
    }

    /**
     * Model charging: the device's requests completed since the last collection are {@code a}'s, the actor that holds
     * the baton (only one runs at a time, and the device's counters are published by the thread that completed the
     * requests); called by the running actor before it gives up the baton. A vCPU outside an exit runs no device code
     * and collects nothing. So with several I/O threads each is charged for its own requests only.
     */
    void collectWork(Actor a) {
        if (charging == Charging.MODEL && (!a.guest || a.inExit)) {
            long work = deviceWork.getAsLong();
            a.pendingWork += Math.max(0, work - workSeen);
            workSeen = Math.max(workSeen, work);
        }
    }

    /**
     * The model's device cost of the requests {@code a} completed and was not charged for ({@link Charging#MODEL}
     * only; measured charging measures it), plus {@code extraNanos}.
     */
    long deviceNanos(Actor a, long extraNanos) {
        long done = 0;
        if (charging == Charging.MODEL) {
            collectWork(a);
            done = a.pendingWork;
            a.pendingWork = 0;
        }
        return done * costs.deviceRequestNs() + extraNanos;
    }

    /** What {@code iterations} turns of a lock's spin loop cost: measured on the host, or the model's. */
    long spinNanos(int iterations) {
        long each = charging == Charging.MEASURED ? HostCosts.spinIterationNs() : costs.spinIterationNs();
        return iterations * each;
    }
}
