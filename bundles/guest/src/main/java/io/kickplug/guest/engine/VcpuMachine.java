package io.kickplug.guest.engine;

import io.kickplug.api.guest.DeviceRecovery;
import io.kickplug.api.guest.KickPolicy;
import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.memory.MemoryLease;
import io.kickplug.api.memory.ReleasedMemoryException;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.lock.LockRegistry;
import io.kickplug.guest.lock.SpinLock;
import io.kickplug.guest.virtio.DriverConfig;
import io.kickplug.guest.virtio.RequestQueue;
import io.kickplug.guest.virtio.VirtioBlkDriver;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The simulated guest: the {@link VirtioBlkDriver} with blk-mq on top, driven by vCPU threads ({@link VcpuThread}).
 *
 * <p><b>Queues.</b> vCPU {@code v} submits to queue {@code v % numQueues} (blk-mq's map); the interrupt of
 * queue {@code q} is handled on vCPU {@code q % vcpus} (its MSI-X vector's affinity, {@link InterruptController}).
 * Each virtqueue has one {@link SpinLock} (Linux's {@code vblk->vqs[q].lock}) around adding chains, kick_prepare
 * and collecting used buffers, and a fixed number of request slots (tags).
 *
 * <p><b>Submission.</b> {@link Vcpu#submit} takes a slot per request (splitting as {@link RequestSplitter}) and
 * puts the requests on the vCPU's plug list; {@link Vcpu#commit} dispatches the list as {@code virtio_queue_rq}
 * does: per request, lock, add the chain, and for the last one ({@code bd->last}) hand the locked queue to the
 * {@link KickPolicy}, which releases the lock and notifies the device as it sees fit; other requests just
 * unlock. Without a free slot the vCPU first dispatches its plug, then waits (handling its own interrupts). A
 * chain that does not fit the ring (no free descriptors) gets the queue kicked and waits for completions, as
 * {@code BLK_STS_DEV_RESOURCE} does. After every job method the plug is dispatched if the job forgot to commit
 * (blk_finish_plug at the end of a system call).
 *
 * <p><b>Completion.</b> The handler reads and acknowledges InterruptStatus (vm_interrupt) or the ISR
 * (vp_interrupt) on a line, and nothing with MSI-X (the vector is the cause), then for each of its queues with
 * used buffers ({@code vring_interrupt}'s more_used check, without the lock) runs {@code virtblk_done}
 * ({@link RequestQueue#drain}). Slots are freed there; the completions go to the submitting vCPU (an IPI when
 * it is another one) whose loop runs the callbacks. A vCPU pays the injection latency once per interrupt that
 * found used buffers on its queues; a fanned-out raise that found nothing is treated as an interrupt for
 * another vCPU and costs nothing. Reading InterruptStatus and the IPI are free.
 *
 * <p><b>Polling (seed 003).</b> A high-priority ({@code hipri}) request is completed by polling from its vCPU,
 * which spins instead of parking while it has such requests in flight and reaps the used ring under the queue's
 * lock ({@link RequestQueue#reap}). With {@link MachineConfig#pollQueues()} N, the last N queues (at most all
 * but one) are poll queues: no vCPU handles their interrupts, their callbacks are off for good (VIRTIO 1.2
 * section 2.7.7), and they take only hipri requests (vCPU v uses poll queue {@code v % N}). With N = 0 a hipri
 * request goes to the vCPU's normal queue, which turns its callbacks off while it has hipri requests in flight
 * and back on when the last one is reaped.
 *
 * <p><b>Exit cost.</b> Each notify is followed by a busy-wait on the vCPU thread until the exit latency has
 * passed since the write began ({@link CostModel}).
 *
 * <p><b>Device removal (hot-swap).</b> When the host closes the device's transport the guest freezes, collects,
 * re-probes and resubmits: {@link RemovalRecovery}.
 */
final class VcpuMachine implements GuestMachine {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final MachineConfig config;
    final KickPolicy policy;
    final CostModel cost;
    final VirtioBlkDriver driver;
    final InterruptController interrupts = new InterruptController();
    final RemovalRecovery recovery;
    final List<VcpuThread> vcpus = new ArrayList<>();
    /** Per queue: the vCPU that handles its interrupts; {@code null} for a poll queue. */
    private final List<VcpuThread> handlers = new ArrayList<>();
    /** The port of the device driven now (another after a re-probe). */
    volatile GuestPort port;
    /** Bumped at each re-probe: a removal signal of an older transport is ignored. */
    volatile int generation;
    private volatile boolean started;
    private boolean removedWhileBooting;
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    volatile Throwable broken;
    volatile boolean stopped;
    volatile JobRun.Run run;
    private boolean closed;
    /** The machine's hold on its memory while its vCPUs may touch it (issue 18); closed by {@link #close}. */
    private final MemoryLease memoryLease;
    /** The least host time a run in virtual time is given before it counts as hung. */
    private static final Duration VIRTUAL_MIN_WAIT = Duration.ofMinutes(10);

    /** The virtual time the vCPUs run in (with the disk's I/O threads), or {@code null}: real time. */
    final VirtualTime time;

    private VcpuMachine(GuestPort port, VirtqueueFactory factory, MachineConfig config, KickPolicy policy,
            LockRegistry locks, DeviceSource source, Consumer<DeviceRecovery> recoveries, VirtualTime time) {
        this.config = config;
        this.time = time;
        this.policy = policy;
        this.cost = new CostModel(config);
        this.port = port;
        this.recovery = new RemovalRecovery(this, source, recoveries);
        DriverConfig driverConfig = new DriverConfig(config.supportedFeatures(),
                config.maxQueues() == 0 ? config.vcpus() : config.maxQueues(), config.queueDepth(),
                config.maxRequestBytes(), config.pollQueues(), config.timeout());
        try {
            this.memoryLease = port.memory().lease();
        } catch (ReleasedMemoryException e) {
            throw new GuestDriverException("the guest memory of " + config.name() + " was already released: "
                    + e.getMessage(), e);
        }
        if (time != null && time.charging() == Charging.MEASURED) {
            // Measured charging charges the vCPUs the CPU time of their code: the first touch of each page of
            // guest memory (a page fault, a huge page zeroed) is taken here, before the driver boots, not inside a
            // measured critical section. Zeroes, as the memory already reads. Model charging charges no CPU time
            // (the model's costs only), so it has nothing to take out of the run.
            for (io.kickplug.api.memory.MemoryRegion r : port.memory().regions()) {
                port.memory().fill(r.guestAddress(), r.size(), (byte) 0);
            }
        }
        try {
            this.driver = VirtioBlkDriver.boot(config.name(), port, factory, driverConfig, connect(0), locks);
        } catch (RuntimeException | Error e) {
            memoryLease.close(); // no vCPU ran
            throw e;
        }
    }

    /**
     * Initializes the device (VIRTIO 1.2 section 3.1.1), sets up the queues and starts the vCPU threads.
     *
     * @param source where to find the device again after a removal, or {@code null} to fail then
     * @param recoveries told about each removal and return, once a request completed after it (or at close)
     * @throws GuestDriverException when the device cannot be driven; FAILED is set when the device got that
     *     far, and interrupts are disconnected again
     */
    static VcpuMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config, KickPolicy policy,
            LockRegistry locks, DeviceSource source, Consumer<DeviceRecovery> recoveries) {
        return boot(port, factory, config, policy, locks, source, recoveries, null);
    }

    /**
     * As above, in {@code time} (virtual time, {@code null} for real time): the vCPUs are actors of that time, as
     * the disk's I/O threads must be (attached with {@code time} as their I/O thread factory). No device removal
     * is survived in virtual time ({@code source} must be null).
     */
    static VcpuMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config, KickPolicy policy,
            LockRegistry locks, DeviceSource source, Consumer<DeviceRecovery> recoveries, VirtualTime time) {
        Objects.requireNonNull(policy, "policy");
        if (time != null && source != null) {
            throw new IllegalArgumentException("a machine in virtual time does not survive device removal");
        }
        VcpuMachine machine = new VcpuMachine(port, factory, config, policy, locks, source, recoveries, time);
        machine.startVcpus();
        synchronized (machine) {
            machine.started = true;
            if (machine.removedWhileBooting) {
                machine.close();
                throw new GuestDriverException("the device of " + config.name() + " was removed while the guest "
                        + "was booting");
            }
        }
        return machine;
    }

    private GuestInterrupts connect(int gen) {
        GuestInterrupts lines = interrupts.connect(gen, this::deviceGone);
        if (time == null) {
            return lines;
        }
        return new GuestInterrupts() { // in virtual time each interrupt sent costs the device its irqfd write
            @Override
            public void raise(int vector) {
                lines.raise(vector);
                time.interruptSent();
            }

            @Override
            public void deviceRemoved() {
                lines.deviceRemoved();
            }
        };
    }

    private void startVcpus() {
        int queues = driver.queueCount();
        int pollQueues = driver.pollQueues();
        int defaultQueues = queues - pollQueues;
        for (int v = 0; v < config.vcpus(); v++) {
            RequestQueue q = driver.queue(v % defaultQueues);
            RequestQueue poll = pollQueues == 0 ? q : driver.queue(defaultQueues + v % pollQueues);
            vcpus.add(new VcpuThread(this, v, q, poll));
        }
        for (int q = 0; q < queues; q++) {
            VcpuThread handler = q < defaultQueues ? vcpus.get(q % vcpus.size()) : null;
            if (handler != null) {
                handler.affine.add(driver.queue(q));
            }
            handlers.add(handler);
        }
        interrupts.route(driver, handlers);
        for (VcpuThread v : vcpus) {
            v.thread.start();
        }
    }

    /** The driver under the vCPUs. */
    VirtioBlkDriver driver() {
        return driver;
    }

    @Override
    public MachineConfig config() {
        return config;
    }

    @Override
    public long capacityBytes() {
        return driver.capacityBytes();
    }

    @Override
    public int numQueues() {
        return driver.queueCount();
    }

    @Override
    public int queueDepth(int queue) {
        return driver.queue(queue).slots();
    }

    @Override
    public boolean readOnly() {
        return driver.readOnly();
    }

    @Override
    public boolean hasFlush() {
        return driver.hasFlush();
    }

    @Override
    public long features() {
        return driver.features();
    }

    @Override
    public RunResult runJobs(List<GuestJob> jobs, Duration timeout) {
        Objects.requireNonNull(jobs, "jobs");
        Objects.requireNonNull(timeout, "timeout");
        checkUsable();
        if (!running.compareAndSet(false, true)) {
            throw new IllegalStateException("machine " + config.name() + " is already running jobs");
        }
        try {
            List<List<GuestJob>> perVcpu = new ArrayList<>();
            for (int v = 0; v < vcpus.size(); v++) {
                perVcpu.add(new ArrayList<>());
            }
            for (int i = 0; i < jobs.size(); i++) {
                perVcpu.get(i % vcpus.size()).add(Objects.requireNonNull(jobs.get(i), "job " + i));
            }
            JobRun.Run r = new JobRun.Run(perVcpu, vcpus.size());
            long[] cpuBefore = new long[vcpus.size()];
            VcpuThread.Counters[] before = new VcpuThread.Counters[vcpus.size()];
            for (VcpuThread v : vcpus) {
                cpuBefore[v.id] = cpuTime(v.thread);
                before[v.id] = v.counters();
            }
            if (time != null) {
                time.awaitIdle(timeout.toNanos()); // the boot's work on the I/O threads is done
            }
            long start = time == null ? System.nanoTime() : time.latestClock();
            run = r;
            if (time == null) {
                vcpus.forEach(v -> LockSupport.unpark(v.thread));
            } else {
                // Every vCPU starts the run at the same virtual time, the latest any actor reached.
                time.wakeAll(vcpus.stream().map(v -> v.clock.actor).toList(), start);
            }
            await(r, timeout);
            if (time != null) {
                time.awaitIdle(timeout.toNanos()); // the last completions and decisions are in the counters
            }
            long elapsed = (time == null ? System.nanoTime() : time.latestClock()) - start;
            List<VcpuStats> stats = new ArrayList<>();
            for (VcpuThread v : vcpus) {
                long cpu = cpuTime(v.thread);
                VcpuThread.Counters now = v.counters();
                VcpuThread.Counters b = before[v.id];
                stats.add(new VcpuStats(v.id, cpu < 0 || cpuBefore[v.id] < 0 ? -1 : cpu - cpuBefore[v.id],
                        now.exitNanos() - b.exitNanos(), now.injectNanos() - b.injectNanos(),
                        now.notifies() - b.notifies(), now.interrupts() - b.interrupts(),
                        now.completions() - b.completions(), now.requests() - b.requests()));
            }
            return new RunResult(elapsed, stats);
        } finally {
            running.set(false);
        }
    }

    private void await(JobRun.Run r, Duration timeout) {
        if (time != null && timeout.compareTo(VIRTUAL_MIN_WAIT) < 0) {
            // The timeout is the run's length plus a margin on the host's clock; in virtual time a second of the
            // machine's time may take minutes of the host's on a loaded host. A stalled device is caught in virtual
            // time by the vCPUs' progress deadline.
            timeout = VIRTUAL_MIN_WAIT;
        }
        try {
            r.done.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            IllegalStateException failure = new IllegalStateException("jobs on " + config.name()
                    + " did not finish within " + timeout.toMillis() + " ms");
            fail(failure);
            throw failure;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            IllegalStateException failure = new IllegalStateException("interrupted while running jobs");
            fail(failure);
            throw failure;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(cause.getMessage(), cause);
        }
    }

    private static long cpuTime(Thread t) {
        if (!THREADS.isThreadCpuTimeSupported()) {
            return -1;
        }
        return THREADS.getThreadCpuTime(t.getId());
    }

    void checkUsable() {
        if (closed || stopped) {
            throw new GuestDriverException("machine " + config.name() + " is closed");
        }
        Throwable b = broken;
        if (b != null) {
            if (b instanceof GuestDriverException g) {
                throw g;
            }
            throw new GuestDriverException("machine " + config.name() + " failed earlier: " + b.getMessage(), b);
        }
    }

    /** Latches the first failure, fails the current run, and wakes every vCPU so they stop. */
    void fail(Throwable t) {
        failure.compareAndSet(null, t);
        broken = failure.get();
        JobRun.Run r = run;
        if (r != null) {
            r.done.completeExceptionally(broken);
        }
        vcpus.forEach(v -> LockSupport.unpark(v.thread));
    }

    // Device removal ----------------------------------------------------------------------------------

    /** Whether a device that goes away (or needs a reset) is waited for instead of failing the machine. */
    boolean survivesRemoval() {
        return recovery.possible() && started;
    }

    /** The transport of generation {@code gen} says the device is gone. */
    void deviceGone(int gen) {
        Thread t;
        synchronized (this) {
            if (gen != generation || closed || stopped || broken != null) {
                return;
            }
            if (!recovery.running()) {
                if (!started) {
                    removedWhileBooting = true; // boot fails; a caller with a source boots again
                    return;
                }
                if (!recovery.possible()) {
                    fail(new GuestDriverException("the device of " + config.name() + " was removed (its transport "
                            + "was closed: disk detached, or a bundle serving it stopped)"));
                    return;
                }
            }
            t = recovery.begin();
        }
        if (t != null) {
            t.start();
            vcpus.forEach(v -> LockSupport.unpark(v.thread));
        }
    }

    /** Re-probes the device behind {@code next} (every vCPU parked) and routes its interrupts. */
    void reprobe(GuestPort next, VirtqueueFactory rings) {
        int gen = generation + 1;
        generation = gen;
        driver.reprobe(next, rings, connect(gen));
        port = next;
        interrupts.route(driver, handlers);
    }

    @Override
    public void close() {
        Thread reprobe;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            stopped = true;
            reprobe = recovery.thread();
            recovery.stop();
            JobRun.Run r = run;
            if (r != null) {
                r.done.completeExceptionally(new GuestDriverException("machine " + config.name()
                        + " was closed while running jobs"));
            }
        }
        // Outside the monitor from here: a vCPU or the recovery thread may need it (deviceGone) on its way out.
        if (time != null) {
            time.shutdown(); // every actor runs freely now: the vCPUs end, the device can be reset
        }
        for (VcpuThread v : vcpus) {
            LockSupport.unpark(v.thread);
        }
        // A recovery under way ends (it sees stopped) before the device is reset below, so it leaves no device
        // initialised behind this closed machine.
        if (reprobe != null && reprobe != Thread.currentThread()) {
            try {
                reprobe.join(config.timeout().toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        recovery.close();
        for (VcpuThread v : vcpus) {
            if (v.thread != Thread.currentThread()) {
                try {
                    v.thread.join(TimeUnit.SECONDS.toMillis(10));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        // The vCPUs are gone: nobody else touches the rings now, the locks are not needed.
        try {
            driver.close();
        } finally {
            // The machine's lease on its memory ends when no vCPU can touch it any more; a vCPU that did not
            // stop in time (or closes its own machine) keeps it, and the garbage collector frees it later.
            boolean vcpusGone = true;
            for (VcpuThread v : vcpus) {
                vcpusGone &= v.thread == null || !v.thread.isAlive() && v.thread != Thread.currentThread();
            }
            if (vcpusGone) {
                memoryLease.close();
            }
        }
    }
}
