package io.kickplug.guest.engine;

import java.util.concurrent.locks.LockSupport;

/**
 * The time hooks of one {@link VcpuThread}: in real time System.nanoTime, LockSupport and spun-out costs
 * ({@link CostModel}); under virtual time its actor in {@link VirtualTime}, with the model's costs charged to its
 * clock. The vCPU's loop and its submission and completion paths call these and need not know which it is.
 */
final class VcpuClock {
    /** The name of a vCPU's actor starts so ({@code vcpu0}); an I/O thread's does not. */
    static final String ACTOR_PREFIX = "vcpu";
    /** Under virtual time: the time and the vCPU's actor in it; both null in real time. */
    final VirtualTime time;
    final VirtualTime.Actor actor;
    private final VcpuThread vcpu;
    private final MachineConfig config;
    private final CostModel cost;

    /** Registers the vCPU's actor under virtual time ({@code time} not null). */
    VcpuClock(VirtualTime time, VcpuThread vcpu, MachineConfig config, CostModel cost) {
        this.time = time;
        this.actor = time == null ? null : time.register(ACTOR_PREFIX + vcpu.id);
        this.vcpu = vcpu;
        this.config = config;
        this.cost = cost;
    }

    /** Whether the vCPU runs in virtual time. */
    boolean virtual() {
        return actor != null;
    }

    /** Wakes the vCPU (LockSupport's unpark, or a wake at the caller's virtual time). */
    void wake() {
        if (actor == null) {
            LockSupport.unpark(vcpu.thread);
        } else {
            time.wakeNow(actor);
        }
    }

    /** Now: System.nanoTime, or the vCPU's virtual clock. */
    long now() {
        return actor == null ? System.nanoTime() : time.now(actor);
    }

    /**
     * An idle vCPU waits for an interrupt, an IPI or a new run: parks for at most {@code nanos}; in virtual time
     * blocks until woken, with that timeout only while it has I/O in flight (its progress deadline).
     */
    void idle(long nanos, boolean inFlight) {
        if (actor == null) {
            LockSupport.parkNanos(vcpu, nanos);
        } else {
            time.block(actor, inFlight ? nanos : VirtualTime.NEVER);
        }
    }

    /** One turn of a vCPU spinning on the used ring for a polled completion. */
    void spin() {
        if (actor == null) {
            Thread.onSpinWait();
        } else {
            time.advance(actor, time.costs().pollNs());
        }
    }

    /** The vCPU's thread starts: it takes its actor's turns from now on. */
    void enter() {
        if (actor != null) {
            time.enter(actor);
        }
    }

    /** The vCPU's thread ends: its actor no longer takes turns. */
    void retire() {
        if (actor != null) {
            time.retire(actor);
        }
    }

    /** After a round with work: the vCPUs and I/O threads due earlier run first (virtual time only). */
    void yieldTurn() {
        if (actor != null) {
            time.yieldTurn(actor);
        }
    }

    /** The guest's cost of completing one request (virtual time only). */
    void chargeComplete() {
        if (actor != null) {
            time.charge(actor, time.costs().guestCompleteNs());
        }
    }

    /** The guest's cost of preparing one request (virtual time only). */
    void chargeSubmit() {
        if (actor != null) {
            time.charge(actor, time.costs().guestSubmitNs());
        }
    }

    /** virtqueue_add, under the queue's lock (virtual time only: model charging). */
    void chargeVqAdd() {
        if (actor != null) {
            time.charge(actor, time.costs().vqAddNs());
        }
    }

    /**
     * Enters or leaves the exit of a notify: with ioeventfd off the device's queue handler runs during it
     * (VirtualIoThread in virtual time, SynchronousNotify in real time); in virtual time, leaving it delivers the
     * interrupts the handler raised meanwhile ({@link #heldUntilExitEnds}).
     */
    void inExit(boolean in) {
        if (actor == null) {
            SynchronousNotify.exit(in);
        } else if (in) {
            actor.inExit = true;
        } else {
            time.endExit(actor);
        }
    }

    /** In virtual time, holds an interrupt raised inside a vCPU's exit until the exit ends (see VirtualTime). */
    boolean heldUntilExitEnds(Runnable delivery) {
        return time != null && time.holdUntilExitEnds(delivery);
    }

    /** The exit latency after a notify that began at {@code t0}: spun out, or charged in virtual time. */
    long exitCost(long t0) {
        if (actor == null) {
            return cost.exitFrom(t0);
        }
        time.advance(actor, config.exitLatencyNs());
        return now() - t0;
    }

    /** The injection cost of one interrupt that found used buffers: spun out, or charged in virtual time. */
    long inject() {
        if (actor == null) {
            return cost.inject();
        }
        long t0 = now();
        time.advance(actor, config.injectLatencyNs());
        return now() - t0;
    }
}
