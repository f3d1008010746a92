package io.kickplug.guest.engine;

import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.api.iothread.VirtualWaits;
import io.kickplug.guest.lock.LockWaits;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Virtual time for one simulated machine and its disk ({@code kp:guest --clock virtual}): the vCPU threads and
 * the device's I/O threads are real threads running the real driver and device code, but only one of them runs
 * at a time, and which one is decided by their virtual clocks, not by the host's scheduler. The result does not
 * depend on how many host cores there are or how busy they are.
 *
 * <p><b>Actors and the baton.</b> Each vCPU and each I/O thread is an {@link Actor} with its own clock. Exactly
 * one actor holds the baton and runs; at a scheduling point (a charge, a wait, the end of a loop iteration) it
 * passes the baton to the actor with the earliest wake-up time, ties broken by a random generator seeded with
 * {@link #seed()}; the others are parked. So every interaction between the threads happens in the same order for
 * the same seed, and a lock held across a charged cost (the vq lock across an exit) is seen held by the actors
 * that run in that interval: they wait in virtual time ({@link LockWaits}) until its holder releases it.
 *
 * <p><b>What time costs.</b> An actor's clock advances by (a) the CPU time its thread spent on the code it ran
 * since its last scheduling point ({@link Charging#MEASURED}; not with {@link Charging#MODEL}, which charges
 * the modelled software costs of {@link ModelCosts} instead), and (b) the modelled hardware costs: a VM exit and an
 * interrupt injection ({@link MachineConfig}), the wake-up of an I/O thread by an ioeventfd, and the device's
 * service time ({@link ModelCosts}). With {@link Charging#MODEL} nothing depends on the host: the same experiment with
 * the same seed gives the same counters (the determinism test).
 *
 * <p><b>ioeventfd.</b> With ioeventfd on (QEMU's default) a notify wakes the queue's I/O thread, which serves
 * the queue on its own clock after {@link ModelCosts#ioeventfdWakeNs}. With it off, the notify exits to the VMM, which
 * runs the queue's handler during the exit, on the notifying vCPU: the device pops and submits what is available
 * and the vCPU resumes after that (the world switch of seed 000 on 2014's KVM/arm, which could not bind an
 * ioeventfd to an MMIO address). The device is one at a time (QEMU's BQL): an exit that finds it busy waits.
 *
 * <p>Also the {@link IoThreadFactory} of the disk: its I/O threads are {@link VirtualIoThread}s of this time.
 * After {@link #shutdown()} every actor runs freely on the host's scheduler (detach, reset).
 */
public final class VirtualTime implements IoThreadFactory {

    static final long NEVER = Long.MAX_VALUE;
    private static final ThreadLocal<Actor> CURRENT = new ThreadLocal<>();

    private final long seed;
    private final Charging charging;
    private final ModelCosts costs;
    private final boolean ioeventfd;
    private final SplittableRandom random;
    /** What the actors' work costs: measured CPU time or the model's device work. */
    private final ActorCharges charges;
    private final List<Actor> actors = new ArrayList<>();
    private final Map<Object, List<Actor>> lockWaiters = new HashMap<>();
    private volatile Actor running;
    private volatile boolean shutdown;
    private long switches;
    private final List<VirtualIoThread> ioThreads = new ArrayList<>();
    /** The host CPUs every actor thread is pinned to while it is an actor ({@link CpuPinning}). */
    private final ActorPinning pinning = new ActorPinning();

    /**
     * @param seed breaks ties between actors due at the same virtual time
     * @param ioeventfd QEMU's ioeventfd property of the disk's transport: off runs a queue's handler during the
     *     notifying vCPU's exit
     */
    public VirtualTime(long seed, Charging charging, ModelCosts costs, boolean ioeventfd) {
        this(seed, charging, costs, ioeventfd, HostCosts::cpu, HostCosts.CPU_CLOCK_READ_NS);
    }

    /**
     * Virtual time whose actors run on {@code cpuList}, which the caller keeps free of other threads
     * ({@link CpuPinning#reserve}); measured charging then reads {@link System#nanoTime} (about 20 ns) instead of
     * the thread CPU clock (a system call of 1.3 us here, twice a whole request's device work at 1.5M IOPS, whose
     * variance and cache cost would land in every charge): on a core that runs one actor at a time and nothing
     * else, the wall time an actor holds the baton is its CPU time.
     */
    public static VirtualTime pinned(long seed, Charging charging, ModelCosts costs, boolean ioeventfd, String cpuList) {
        VirtualTime t = new VirtualTime(seed, charging, costs, ioeventfd, System::nanoTime,
                HostCosts.NANO_TIME_READ_NS);
        t.pinActors(Objects.requireNonNull(cpuList, "cpuList"));
        return t;
    }

    /**
     * @param cpuClock the current thread's CPU time in ns, read by measured charging
     * @param cpuReadCostNs what one reading of {@code cpuClock} costs: taken off each charge
     */
    VirtualTime(long seed, Charging charging, ModelCosts costs, boolean ioeventfd, LongSupplier cpuClock,
            long cpuReadCostNs) {
        this.charges = new ActorCharges(charging, costs, cpuClock, cpuReadCostNs);
        this.seed = seed;
        this.charging = Objects.requireNonNull(charging, "charging");
        this.costs = Objects.requireNonNull(costs, "costs");
        this.ioeventfd = ioeventfd;
        this.random = new SplittableRandom(seed);
    }

    public long seed() {
        return seed;
    }

    public Charging charging() {
        return charging;
    }

    public ModelCosts costs() {
        return costs;
    }

    public boolean ioeventfd() {
        return ioeventfd;
    }

    /** Baton hand-offs so far (a measure of the simulation's own work). */
    public synchronized long switches() {
        return switches;
    }

    /** The latest clock of any actor: how far the machine's virtual time got. */
    public synchronized long latestClock() {
        long t = 0;
        for (Actor a : actors) {
            t = Math.max(t, a.clock);
        }
        return t;
    }

    /** Where the device's completed-request count comes from (the model's per-request device cost). */
    public void deviceWork(LongSupplier work) {
        charges.deviceWork(work);
    }

    /**
     * Pins every actor thread that enters from now on to {@code cpuList} (a Linux CPU list such as "1") until it
     * retires; null: no pinning. Why one core: {@link CpuPinning}.
     *
     * @throws IllegalArgumentException when the list does not parse
     */
    void pinActors(String cpuList) {
        pinning.pinTo(cpuList);
    }

    /** How many actor threads took the pin so far (taskset can be missing or refused). */
    public int pinnedActors() {
        return pinning.pinned();
    }

    @Override
    public IoThread start(String name) {
        VirtualIoThread t = new VirtualIoThread(this, name);
        synchronized (this) {
            ioThreads.add(t);
        }
        t.startThread();
        return t;
    }

    /** Lets every actor run freely on the host's scheduler from now on (the end of the experiment). */
    public void shutdown() {
        List<Actor> all;
        synchronized (this) {
            shutdown = true;
            running = null;
            all = new ArrayList<>(actors);
        }
        for (Actor a : all) {
            if (a.thread != null) {
                LockSupport.unpark(a.thread);
            }
        }
    }

    public boolean isShutdown() {
        return shutdown;
    }

    /**
     * Waits (from outside, on the host's clock) until no actor runs or is due: the machine is quiescent. A run
     * starts and ends there, so what the host thread does around it (boot, reading counters) never overlaps an
     * actor and the same seed replays the same schedule.
     *
     * @return false when it gave up after {@code timeoutNanos}
     */
    public synchronized boolean awaitIdle(long timeoutNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        while (running != null && !shutdown) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    // Actors ---------------------------------------------------------------------------------------------

    /**
     * A thread under this virtual time: a vCPU or an I/O thread. Its {@link LockWaits} make the guest's vq lock
     * wait in virtual time, its {@link VirtualWaits} the device's tracked-requests lock.
     */
    final class Actor implements LockWaits, VirtualWaits {
        final String name;
        final int index;
        /** A vCPU (its code outside an exit is the guest's), not an I/O thread (the device's). */
        final boolean guest;
        volatile Thread thread;
        long clock;
        /** When it may run next; {@link #NEVER} while blocked without a deadline; meaningful while not running. */
        long wakeAt = NEVER;
        /** A wake that came while it was running (LockSupport's permit): its next block returns at once. */
        long permit = NEVER;
        boolean blocked = true;
        boolean retired;
        long cpuMark;
        /** In a notify's exit (ioeventfd off: a queue handler runs here). */
        boolean inExit;
        /** Interrupts the handler raised during this actor's exit, delivered when the exit ends. */
        final List<Runnable> afterExit = new ArrayList<>();
        /** The thread's CPU list before {@link #pinActors} pinned it, restored when it retires; null if unpinned. */
        String unpinTo;
        /**
         * Model charging: the device's requests this actor completed (published while it held the baton) and was not
         * charged for yet.
         */
        long pendingWork;

        Actor(String name, int index) {
            this.name = name;
            this.index = index;
            this.guest = name.startsWith(VcpuClock.ACTOR_PREFIX);
        }

        @Override
        public long now() {
            return VirtualTime.this.now(this);
        }

        @Override
        public void await(Object lock) {
            enlist(lock);
            block(this, NEVER);
        }

        /** Registers this actor as a waiter for {@code token}'s next {@link #wake}. */
        private void enlist(Object token) {
            synchronized (VirtualTime.this) {
                lockWaiters.computeIfAbsent(token, k -> new ArrayList<>()).add(this);
            }
        }

        @Override
        public void released(Object lock) {
            List<Actor> waiting;
            synchronized (VirtualTime.this) {
                waiting = lockWaiters.remove(lock);
            }
            if (waiting != null) {
                for (Actor w : waiting) {
                    VirtualTime.this.wake(w, clock);
                }
            }
        }

        @Override
        public void point() {
            if (running == this && Thread.currentThread() == thread) {
                yieldTurn(this);
            }
        }

        @Override
        public void awaitNanos(Object token, long timeoutNanos) {
            enlist(token);
            block(this, Math.max(0, timeoutNanos));
            synchronized (VirtualTime.this) { // timed out: no later wake of the token may reach this actor
                List<Actor> waiting = lockWaiters.get(token);
                if (waiting != null && waiting.remove(this) && waiting.isEmpty()) {
                    lockWaiters.remove(token);
                }
            }
        }

        @Override
        public long spinNanos(int iterations) {
            return charges.spinNanos(iterations);
        }

        @Override
        public void wake(Object token, long delayNanos) {
            List<Actor> waiting;
            synchronized (VirtualTime.this) {
                waiting = lockWaiters.remove(token);
            }
            if (waiting != null) {
                long at = VirtualTime.this.now(this) + delayNanos;
                for (Actor w : waiting) {
                    VirtualTime.this.wake(w, at);
                }
            }
        }

        @Override
        public long wakeUpNanos() {
            return costs.threadWakeNs();
        }

        @Override
        public boolean modelCharging() {
            return charging == Charging.MODEL;
        }

        @Override
        public long futexWaitNanos() {
            return charging == Charging.MODEL ? costs.futexWaitNs() : 0;
        }

        @Override
        public void chargeCriticalSection() {
            chargeModel(costs.trackedSectionNs());
        }

        @Override
        public void chargeCoroutineSwitch() {
            chargeModel(costs.coroutineSwitchNs());
        }

        @Override
        public void chargeCoroutineSchedule() {
            chargeModel(costs.coScheduleNs());
        }

        /** The model's cost {@code nanos} on this actor's clock, under model charging, when it runs: a scheduling point. */
        private void chargeModel(long nanos) {
            if (running == this && Thread.currentThread() == thread) {
                charge(this, nanos);
            }
        }

        VirtualTime time() {
            return VirtualTime.this;
        }

        @Override
        public String toString() {
            return name + "@" + clock;
        }
    }

    /** A new actor, blocked until woken; call {@link #enter} on its thread. */
    synchronized Actor register(String name) {
        Actor a = new Actor(name, actors.size());
        a.clock = latestClockLocked();
        actors.add(a);
        return a;
    }

    private long latestClockLocked() {
        long t = 0;
        for (Actor a : actors) {
            t = Math.max(t, a.clock);
        }
        return t;
    }

    /** Binds {@code a} to the current thread and waits for its first turn. */
    void enter(Actor a) {
        a.thread = Thread.currentThread();
        a.unpinTo = pinning.pinCurrentThread();
        CURRENT.set(a);
        LockWaits.install(a);
        VirtualWaits.install(a);
        awaitTurn(a);
    }

    /** The current thread's actor, or {@code null} (not under virtual time, or another time). */
    Actor current() {
        Actor a = CURRENT.get();
        return a != null && !a.retired && a.time() == this ? a : null;
    }

    /** The actor leaves (its thread ends): it is never scheduled again; passes the baton if it held it. */
    void retire(Actor a) {
        synchronized (this) {
            a.retired = true;
            a.blocked = true;
            a.wakeAt = NEVER;
            if (running == a && !shutdown) {
                dispatchLocked();
            }
        }
        if (Thread.currentThread() == a.thread) {
            ActorPinning.unpinCurrentThread(a.unpinTo);
            a.unpinTo = null;
            CURRENT.remove();
            LockWaits.install(null);
            VirtualWaits.install(null);
        }
    }

    /**
     * The actor's virtual time. Measured charging folds the CPU time spent since the last reading into the clock,
     * less this reading's own cost, as {@link #chargeCpu} does: a reading of the thread CPU clock is a system call
     * (1.3-1.5 us on the 2-core CI machine, more than the tracked lock's critical section), and the tracked lock's
     * statistics and the guest's latency timestamps read the time several times per request; charged to the
     * actor, those readings made every critical section they bracket about 1.5 us longer in virtual time.
     */
    long now(Actor a) {
        if (charging == Charging.MEASURED && running == a && Thread.currentThread() == a.thread) {
            chargeCpu(a);
        }
        return a.clock;
    }

    /** Charges {@code nanos} of modelled cost to the running actor {@code a}, then lets earlier actors run. */
    void advance(Actor a, long nanos) {
        if (shutdown) {
            return;
        }
        chargeCpu(a);
        a.clock += nanos;
        reschedule(a, a.clock);
    }

    /** The model's software cost: charged only with {@link Charging#MODEL} (MEASURED measures it instead). */
    void charge(Actor a, long modelNanos) {
        if (charging == Charging.MODEL && modelNanos > 0) {
            advance(a, modelNanos);
        }
    }

    /** A scheduling point without a cost of its own: the CPU time so far is charged, earlier actors run. */
    void yieldTurn(Actor a) {
        if (shutdown) {
            return;
        }
        chargeCpu(a);
        reschedule(a, a.clock);
    }

    /**
     * Blocks the running actor until it is woken, or until {@code timeoutNanos} of virtual time passed
     * ({@link #NEVER}: no timeout). After {@link #shutdown()}, parks on the host for at most a millisecond.
     */
    void block(Actor a, long timeoutNanos) {
        if (shutdown) {
            LockSupport.parkNanos(this, Math.min(timeoutNanos, TimeUnit.MILLISECONDS.toNanos(1)));
            return;
        }
        chargeCpu(a);
        reschedule(a, timeoutNanos == NEVER ? NEVER : a.clock + timeoutNanos);
    }

    /** Wakes {@code b} at virtual time {@code at} (not before its own clock); from any thread. */
    void wake(Actor b, long at) {
        Thread t = null;
        synchronized (this) {
            if (shutdown || b.retired) {
                t = b.thread;
            } else if (b.blocked) {
                b.wakeAt = Math.min(b.wakeAt, Math.max(at, b.clock));
                if (running == null) {
                    t = dispatchLocked();
                }
            } else {
                b.permit = Math.min(b.permit, at);
            }
        }
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Wakes every actor of {@code all} at {@code at} in one step (a run starts: no actor runs before all are due). */
    void wakeAll(List<Actor> all, long at) {
        Thread t = null;
        synchronized (this) {
            for (Actor b : all) {
                if (!shutdown && !b.retired && b.blocked) {
                    b.wakeAt = Math.min(b.wakeAt, Math.max(at, b.clock));
                }
            }
            if (!shutdown && running == null) {
                t = dispatchLocked();
            }
        }
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Wakes {@code b} at the current thread's virtual time (its own clock when called from outside). */
    void wakeNow(Actor b) {
        Actor me = current();
        wake(b, me == null ? b.clock : now(me));
    }

    /** Keeps {@code device} busy until {@code until}: an exit ran its handler (ioeventfd off). */
    synchronized void occupy(Actor device, long until) {
        device.clock = Math.max(device.clock, until);
        if (device.blocked && device.wakeAt != NEVER) {
            device.wakeAt = Math.max(device.wakeAt, device.clock);
        }
    }

    /**
     * The device sent a used-buffer notification from the current thread: its irqfd write
     * ({@link ModelCosts#irqfdNs}) is charged to the sender, and the charge is a scheduling point, so a vCPU the
     * interrupt woke handles it while the device goes on completing (its later completions then find the driver's
     * {@code used_event} moved on, and notify again, unless a strategy batched them). Not from outside virtual time.
     */
    void interruptSent() {
        Actor a = current();
        if (a != null && running == a && !shutdown) {
            chargeDeviceWork(a, costs.irqfdNs());
        }
    }

    /**
     * Charges {@code a} the model's device cost of the requests it completed and was not charged for yet
     * ({@link Charging#MODEL} only; measured charging measures it), plus {@code extraNanos}: before an interrupt
     * goes out, the device's work that preceded it is on its clock, as it would be with measured charging.
     */
    void chargeDeviceWork(Actor a, long extraNanos) {
        long nanos = charges.deviceNanos(a, extraNanos);
        if (nanos > 0) {
            advance(a, nanos);
        }
    }

    /** Whether the current thread is a vCPU in a notify's exit. */
    boolean inExit() {
        Actor a = current();
        return a != null && a.inExit;
    }

    /**
     * An interrupt raised by a device handler running inside the current actor's exit (ioeventfd off) is held until
     * that exit ends ({@link #endExit}): the VMM that runs the handler holds its big lock for the whole exit (QEMU's
     * BQL, taken by a vCPU thread from KVM_RUN's return to the next KVM_RUN), and the completion side that injects
     * the interrupt needs the same lock (QEMU 2014 without dataplane: the main loop's AIO completion, under the
     * BQL). So the other vCPUs see no completion, and free no slot for a new request, while one exit drains the ring.
     *
     * @return true when {@code delivery} was held
     */
    boolean holdUntilExitEnds(Runnable delivery) {
        Actor a = current();
        if (a == null || !a.inExit) {
            return false;
        }
        a.afterExit.add(delivery);
        return true;
    }

    /** {@code a}'s exit ends: the interrupts it held are delivered now, in the order they were raised. */
    void endExit(Actor a) {
        a.inExit = false; // so a delivery is not held again
        a.afterExit.forEach(Runnable::run);
        a.afterExit.clear();
    }

    private void chargeCpu(Actor a) {
        charges.chargeCpu(a);
    }

    /**
     * A measured slice (the code an actor ran between two scheduling points) longer than this is not the code's own
     * time: such code is a few microseconds at most, and on the wall clock of a pinned CPU that other processes
     * share, a slice this long is the host's scheduler running someone else (a time slice is milliseconds), or a
     * JVM pause.
     */
    public static final long LONG_SLICE_NS = 100_000;

    /** Measured slices longer than {@link #LONG_SLICE_NS} charged so far. */
    public long longSlices() {
        return charges.longSlices();
    }

    /** What those slices charged in all, ns. */
    public long longSliceNanos() {
        return charges.longSliceNanos();
    }

    /**
     * Measured charging: what the guest's code (the vCPUs outside their exits) took so far, ns, the slices longer
     * than {@link #LONG_SLICE_NS} left out; 0 under model charging.
     */
    public long guestCpuNanos() {
        return charges.guestNanos();
    }

    /** Measured charging: what the device's code (the I/O threads, a vCPU's exit) took so far, as {@link #guestCpuNanos}. */
    public long deviceCpuNanos() {
        return charges.deviceNanos();
    }

    /** {@code a} gives up the baton until {@code wakeAt}, and gets it back when it is the earliest. */
    private void reschedule(Actor a, long wakeAt) {
        charges.collectWork(a); // outside the monitor: the count is read from the device's registry
        Thread next;
        synchronized (this) {
            if (running != a) {
                return; // not its turn (a stray call): nothing to hand over
            }
            if (a.permit != NEVER) {
                wakeAt = Math.min(wakeAt, Math.max(a.permit, a.clock));
                a.permit = NEVER;
            }
            a.blocked = true;
            a.wakeAt = wakeAt;
            next = dispatchLocked();
        }
        if (next != null && next != Thread.currentThread()) {
            LockSupport.unpark(next);
        }
        awaitTurn(a);
    }

    /** Gives the baton to the earliest actor (ties: seeded random); returns its thread, or null when idle. */
    private Thread dispatchLocked() {
        long best = NEVER;
        int ties = 0;
        for (Actor c : actors) {
            if (c.retired || !c.blocked || c.wakeAt == NEVER) {
                continue;
            }
            if (c.wakeAt < best) {
                best = c.wakeAt;
                ties = 1;
            } else if (c.wakeAt == best) {
                ties++;
            }
        }
        if (ties == 0) {
            running = null;
            notifyAll(); // awaitIdle
            return null;
        }
        int pick = ties == 1 ? 0 : random.nextInt(ties);
        Actor next = null;
        for (Actor c : actors) {
            if (!c.retired && c.blocked && c.wakeAt == best && pick-- == 0) {
                next = c;
                break;
            }
        }
        next.clock = Math.max(next.clock, next.wakeAt);
        next.wakeAt = NEVER;
        next.blocked = false;
        switches++;
        running = next;
        return next.thread;
    }

    private void awaitTurn(Actor a) {
        while (running != a && !shutdown) {
            LockSupport.park(this);
        }
        charges.markCpu(a);
    }
}
