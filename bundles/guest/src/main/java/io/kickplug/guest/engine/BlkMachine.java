package io.kickplug.guest.engine;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.guest.DeviceRecovery;
import io.kickplug.api.guest.KickPolicy;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.MemoryLease;
import io.kickplug.api.memory.ReleasedMemoryException;
import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.driver.VirtioInit;
import io.kickplug.guest.lock.LockRegistry;
import io.kickplug.guest.lock.SpinLock;
import io.kickplug.guest.memory.GuestRam;
import io.kickplug.guest.transport.InterruptRouting;
import io.kickplug.guest.transport.VirtioTransportDriver;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The simulated guest: a virtio-blk driver after Linux's virtio_blk with blk-mq, driven by vCPU threads.
 *
 * <p><b>Queues.</b> vCPU {@code v} submits to hardware queue {@code v % numQueues} (blk-mq's map); the
 * interrupt of queue {@code q} is handled on vCPU {@code q % vcpus} (its MSI-X vector's affinity). Each
 * virtqueue has one {@link SpinLock} (Linux's {@code vblk->vqs[q].lock}) around adding chains, kick_prepare
 * and collecting used buffers, and a fixed number of tags (requests in flight).
 *
 * <p><b>Submission.</b> {@link Vcpu#submit} takes a tag per request (splitting as {@link RequestSplitter})
 * and puts the requests on the vCPU's plug list; {@link Vcpu#commit} dispatches the list as
 * {@code virtio_queue_rq} does: per request, lock, add the chain, and for the last one ({@code bd->last})
 * hand the locked queue to the {@link KickPolicy}, which releases the lock and notifies the device as it
 * sees fit; other requests just unlock. Without a free tag the vCPU first dispatches its plug, then waits
 * (handling its own interrupts). A chain that does not fit the ring (no free descriptors) gets the queue
 * kicked and waits for completions, as {@code BLK_STS_DEV_RESOURCE} does. After every job method the plug is
 * dispatched if the job forgot to commit (blk_finish_plug at the end of a system call).
 *
 * <p><b>Completion.</b> virtio-mmio has one interrupt line (as has virtio-pci with INTx, or with one MSI-X
 * vector shared by the queues); the guest's interrupt controller fans a raise out to the vCPUs owning queues
 * (as if each queue had its own vector). virtio-pci with a vector per queue delivers queue q's vector to vCPU
 * {@code q % vcpus} only, and the configuration vector to queue 0's vCPU. The handler reads and acknowledges
 * InterruptStatus (vm_interrupt) or the ISR (vp_interrupt) on a line, and nothing with MSI-X (the vector is
 * the cause), then for each of its queues with used buffers ({@code vring_interrupt}'s
 * more_used check, without the lock) runs {@code virtblk_done}: lock, disable callbacks, collect used
 * buffers, re-enable, repeat while more arrived, unlock. Tags are freed there; the completions go to the
 * submitting vCPU (an IPI when it is another one) whose loop runs the callbacks. A vCPU pays the injection
 * latency once per interrupt that found used buffers on its queues; a fanned-out raise that found nothing is
 * treated as an interrupt for another vCPU and costs nothing. Reading InterruptStatus and the IPI are free.
 *
 * <p><b>Polling (seed 003).</b> A high-priority ({@code hipri}) request is completed by polling from its vCPU,
 * which spins instead of parking while it has such requests in flight and reaps the used ring under the
 * queue's lock (blk_mq_poll / virtblk_poll). With {@link MachineConfig#pollQueues()} N, the last N queues
 * (at most all but one) are poll queues: no vCPU handles their interrupts, their callbacks are off for good
 * (VIRTIO 1.2 section 2.7.7: NO_INTERRUPT, or used_event kept behind with EVENT_IDX), and they take only hipri
 * requests (vCPU v uses poll queue {@code v % N}). With N = 0 a hipri request goes to the vCPU's normal queue,
 * which turns its callbacks off while it has hipri requests in flight and back on when the last one is reaped,
 * then looks at the used ring again (virtqueue_enable_cb's contract); its interrupt handler meanwhile collects
 * without re-enabling.
 *
 * <p><b>Exit cost.</b> Each notify is the QueueNotify write (virtio-mmio) or the notify-region write
 * (virtio-pci) followed by a busy-wait on the vCPU thread until
 * the exit latency has passed since the write began.
 *
 * <p><b>Device removal (hot-swap).</b> When the host closes the device's transport (a bundle serving the disk
 * is stopped or updated) the transport resets the device, which completes what it had in flight, and then
 * calls {@link GuestInterrupts#deviceRemoved}. The guest then freezes (every vCPU parks at a safe point, no
 * lock held, as blk_mq_freeze_queue), takes what the old used rings hold (those requests complete once, as
 * usual), waits for the disk to come back through its {@link DeviceSource}, checks that the new device sees
 * the same guest memory, re-initialises it (section 3.1.1) with new rings from the current
 * {@link VirtqueueFactory} at the same guest addresses, submits again every request that was in the device
 * and not completed, and thaws: Linux virtio_blk's freeze/restore. A request is completed to its job only when
 * it is taken from a used ring, and resubmitted only while it is not, so none completes twice. A removal
 * during the recovery starts it over.
 */
final class BlkMachine implements GuestMachine {
    private static final int MAX_QUEUE_SIZE = 32768;
    private static final byte STATUS_UNWRITTEN = (byte) 0xFF;
    private static final int CONFIG_READ_ATTEMPTS = 1000;
    /** Linux's BLK_MAX_REQUEST_COUNT: a plug holding this many requests is dispatched at once. */
    static final int PLUG_FLUSH_COUNT = 32;
    /** Longest park of an idle vCPU between checks of its deadlines. */
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private volatile GuestPort port;
    private volatile VirtioTransportDriver transport;
    private volatile VirtioInit init;
    /** Where the device is found again after a removal; {@code null}: a removal fails the machine. */
    private final DeviceSource source;
    private final java.util.function.Consumer<DeviceRecovery> recoveries;
    /** Guest RAM for the same-memory check of a returned device. */
    private long probeCell;
    /** Bumped at each re-probe: a removal signal of an older transport is ignored. */
    private volatile int generation;
    /** Non-null while the device is gone and the vCPUs freeze. */
    private volatile Recovery recovery;
    /** Set when a removal comes while a recovery runs: it starts over. */
    private volatile boolean removedAgain;
    private volatile boolean started;
    private boolean removedWhileBooting;
    /** The last recovery, until a request completes after it. */
    private final java.util.concurrent.atomic.AtomicReference<Recovery> awaitingFirst =
            new java.util.concurrent.atomic.AtomicReference<>();
    private final MachineConfig config;
    private final KickPolicy policy;
    private final GuestMemory memory;
    /** The machine's hold on its memory while its vCPUs may touch it (issue 18); closed by {@link #close}. */
    private final MemoryLease memoryLease;
    private final GuestRam ram;
    private final long features;
    private final List<Hwq> queues = new ArrayList<>();
    /** Queues with interrupts (the first ones) and poll queues (the last ones); set by setUp. */
    private int defaultQueues;
    private int pollQueues;
    private final List<VcpuThread> vcpus = new ArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean();
    private volatile long capacitySectors;
    private int segMax = 1;
    private boolean indirect;
    private final java.util.concurrent.atomic.AtomicReference<Throwable> failure =
            new java.util.concurrent.atomic.AtomicReference<>();
    private volatile Throwable broken;
    /** How the device's interrupts arrive, from find_vqs. */
    private InterruptRouting routing;
    /** Per vector (or line): the vCPUs it is delivered to; empty until they run. */
    private volatile VcpuThread[][] vectorTargets = new VcpuThread[0][];
    private volatile boolean stopped;
    private volatile Run run;
    private boolean closed;

    private BlkMachine(GuestPort port, VirtioTransportDriver transport, MachineConfig config, KickPolicy policy,
            DeviceSource source, java.util.function.Consumer<DeviceRecovery> recoveries) {
        this.source = source;
        this.recoveries = recoveries == null ? r -> { } : recoveries;
        this.port = port;
        this.transport = transport;
        this.config = config;
        this.policy = policy;
        this.memory = port.memory();
        try {
            this.memoryLease = memory.lease();
        } catch (ReleasedMemoryException e) {
            throw new GuestDriverException("the guest memory of " + config.name() + " was already released: "
                    + e.getMessage(), e);
        }
        this.ram = new GuestRam(memory);
        this.init = new VirtioInit(transport, config.timeout());
        this.features = init.negotiate(DeviceIds.BLOCK, config.supportedFeatures());
    }

    /**
     * Initializes the device (VIRTIO 1.2 section 3.1.1), sets up the queues and starts the vCPU threads.
     *
     * @throws GuestDriverException when the device cannot be driven; FAILED is set when the device got that
     *     far, and interrupts are disconnected again
     */
    static BlkMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config, KickPolicy policy,
            LockRegistry locks) {
        return boot(port, factory, config, policy, locks, null, null);
    }

    /**
     * @param source where to find the device again after a removal, or {@code null} to fail then
     * @param recoveries told about each removal and return, once a request completed after it (or at close)
     */
    static BlkMachine boot(GuestPort port, VirtqueueFactory factory, MachineConfig config, KickPolicy policy,
            LockRegistry locks, DeviceSource source, java.util.function.Consumer<DeviceRecovery> recoveries) {
        Objects.requireNonNull(policy, "policy");
        BlkMachine machine = new BlkMachine(port, VirtioTransportDriver.forPort(port), config, policy, source,
                recoveries);
        try {
            machine.setUp(factory, locks);
        } catch (RuntimeException e) {
            machine.init.fail();
            port.connectInterrupts(null);
            machine.memoryLease.close(); // no vCPU ran
            if (e instanceof GuestDriverException) {
                throw e;
            }
            throw new GuestDriverException("virtio-blk initialization failed: " + e.getMessage(), e);
        }
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

    private void setUp(VirtqueueFactory factory, LockRegistry locks) {
        capacitySectors = readConfig64(VirtioBlk.CFG_CAPACITY);
        if ((features & VirtioBlk.F_SEG_MAX) != 0) {
            segMax = readConfigStable(VirtioBlk.CFG_SEG_MAX, 4);
            if (segMax == 0) {
                throw new GuestDriverException("device offers VIRTIO_BLK_F_SEG_MAX with seg_max 0; a request needs "
                        + "at least one data segment (VIRTIO 1.2 section 5.2.4)");
            }
        }
        // size_max (section 5.2.4) is read for completeness; Linux clamps it to at least a page, so with one
        // segment per page it never cuts anything (see RequestSplitter).
        if ((features & VirtioBlk.F_SIZE_MAX) != 0) {
            readConfigStable(VirtioBlk.CFG_SIZE_MAX, 4);
        }
        int wanted = 1;
        if ((features & VirtioBlk.F_MQ) != 0) {
            // Section 5.2.4: num_queues is valid with VIRTIO_BLK_F_MQ; 0 makes no sense, use one queue then.
            wanted = Math.max(1, readConfigStable(VirtioBlk.CFG_NUM_QUEUES, 2) & 0xFFFF);
        }
        // Linux: min(num_queues, nr_cpu_ids).
        wanted = Math.min(wanted, config.maxQueues() == 0 ? config.vcpus() : config.maxQueues());
        indirect = (features & VirtioFeatures.RING_INDIRECT_DESC) != 0;
        // A request never needs more segments than pages in maxRequestBytes; cap seg_max there so the
        // preallocated indirect tables stay small (Linux caps at 32766).
        segMax = (int) Math.min(Integer.toUnsignedLong(segMax), config.maxRequestBytes() / RequestSplitter.PAGE + 1);

        List<Integer> sizes = new ArrayList<>();
        for (int q = 0; q < wanted; q++) {
            int max = transport.queueMaxSize(q);
            if (max == 0) {
                if (q == 0) {
                    throw new GuestDriverException("device has no request queue: QueueNumMax of queue 0 is 0 "
                            + "(VIRTIO 1.2 section 4.2.3.2)");
                }
                break;
            }
            if (max < 0 || max > MAX_QUEUE_SIZE || Integer.bitCount(max) != 1) {
                throw new GuestDriverException("queue " + q + " reports QueueNumMax " + Integer.toUnsignedString(max)
                        + "; a split virtqueue size is a power of two up to 32768 (VIRTIO 1.2 section 2.7)");
            }
            if (transport.queueReady(q)) {
                throw new GuestDriverException("queue " + q + " is already ready before the driver set it up "
                        + "(VIRTIO 1.2 section 4.2.3.2)");
            }
            sizes.add(max);
        }
        if (!indirect) {
            // Without indirect descriptors a chain of header + segments + status must fit the ring (2.7.5).
            int smallest = sizes.stream().mapToInt(Integer::intValue).min().orElse(4);
            segMax = Math.max(1, Math.min(segMax, smallest - 2));
        }
        probeCell = ram.allocate(8, 8);
        port.connectInterrupts(new Interrupts(generation));
        List<QueueLayout> layouts = new ArrayList<>();
        for (int q = 0; q < sizes.size(); q++) {
            int size = sizes.get(q);
            long base = ram.allocate(QueueLayout.contiguousBytes(size), 16);
            QueueLayout layout = QueueLayout.contiguous(size, base);
            int maxIndirect = segMax + 2;
            long indirectArea = indirect ? ram.allocate((long) size * maxIndirect * 16, 16) : -1;
            DriverQueue dq = factory.createDriverQueue(memory, layout, features, indirectArea,
                    indirect ? maxIndirect : 0);
            layouts.add(layout);
            int tags = config.queueDepth() == 0 ? size : Math.min(config.queueDepth(), size);
            Hwq hwq = new Hwq(q, dq, new SpinLock(locks.lockClass(config.name() + " vq" + q)), tags);
            hwq.layout = layout;
            hwq.indirectArea = indirectArea;
            hwq.maxIndirect = indirect ? maxIndirect : 0;
            for (int t = 0; t < tags; t++) {
                Req req = new Req(hwq, t, ram.allocate(VirtioBlk.HEADER_SIZE, 16), ram.allocate(1, 1));
                hwq.all.add(req);
                hwq.free.add(req);
            }
            queues.add(hwq);
        }
        // Linux: num_poll_vqs = min(poll_queues, num_vqs - 1); the poll queues are the last ones.
        pollQueues = Math.min(config.pollQueues(), queues.size() - 1);
        defaultQueues = queues.size() - pollQueues;
        for (int q = defaultQueues; q < queues.size(); q++) {
            Hwq poll = queues.get(q);
            poll.pollQueue = true;
            // No callback, no vector: interrupts off for good (section 2.7.7), before any buffer is added.
            poll.dq.disableCallbacks();
        }
        // find_vqs: rings and interrupts (the MMIO line; on virtio-pci MSI-X vectors, or INTx as a fallback).
        routing = transport.findQueues(layouts);
        init.driverOk();
    }

    private void startVcpus() {
        for (int v = 0; v < config.vcpus(); v++) {
            vcpus.add(new VcpuThread(v));
        }
        for (Hwq q : queues.subList(0, defaultQueues)) {
            q.handler = vcpus.get(q.index % vcpus.size());
            q.handler.affine.add(q);
        }
        vectorTargets = routeVectors();
        for (VcpuThread v : vcpus) {
            v.thread.start();
        }
    }

    /**
     * The guest's interrupt routing: a vector goes to the vCPUs that handle the queues mapped to it (queue q's
     * handler is vCPU q % vcpus, its MSI-X affinity), and the configuration vector also to queue 0's. With one
     * line (virtio-mmio, virtio-pci INTx) or one vector shared by the queues this fans a raise out to every
     * vCPU owning a queue; with a vector per queue (MSI-X) each goes to exactly one vCPU.
     */
    private VcpuThread[][] routeVectors() {
        int highest = routing.configVector();
        for (int q = 0; q < routing.queues(); q++) {
            highest = Math.max(highest, routing.queueVector(q));
        }
        VcpuThread[][] targets = new VcpuThread[highest + 1][];
        for (int vector = 0; vector <= highest; vector++) {
            List<VcpuThread> to = new ArrayList<>();
            for (int q : routing.queuesOf(vector)) {
                // A poll queue has no handler: nothing takes its interrupts.
                VcpuThread handler = queues.get(q).handler;
                if (handler != null && !to.contains(handler)) {
                    to.add(handler);
                }
            }
            if (vector == routing.configVector() && !to.contains(queues.get(0).handler)) {
                to.add(queues.get(0).handler);
            }
            targets[vector] = to.toArray(VcpuThread[]::new);
        }
        return targets;
    }

    /** The interrupt routing find_vqs chose. */
    InterruptRouting routing() {
        return routing;
    }

    /** The ids of the vCPUs an interrupt on {@code vector} is delivered to, in order. */
    List<Integer> vectorTargets(int vector) {
        VcpuThread[][] targets = vectorTargets;
        if (vector < 0 || vector >= targets.length) {
            return List.of();
        }
        return java.util.Arrays.stream(targets[vector]).map(v -> v.id).toList();
    }

    @Override
    public MachineConfig config() {
        return config;
    }

    @Override
    public long capacityBytes() {
        long sectors = capacitySectors;
        return sectors > Long.MAX_VALUE / VirtioBlk.SECTOR_SIZE ? Long.MAX_VALUE : sectors * VirtioBlk.SECTOR_SIZE;
    }

    @Override
    public int numQueues() {
        return queues.size();
    }

    /** The poll queues in use (the last ones). */
    int pollQueues() {
        return pollQueues;
    }

    /** Queue {@code q}'s driver view, for tests that look at the rings. */
    DriverQueue driverQueue(int q) {
        return queues.get(q).dq;
    }

    @Override
    public int queueDepth(int queue) {
        return queues.get(queue).tags;
    }

    @Override
    public boolean readOnly() {
        return (features & VirtioBlk.F_RO) != 0;
    }

    @Override
    public boolean hasFlush() {
        return (features & VirtioBlk.F_FLUSH) != 0;
    }

    @Override
    public long features() {
        return features;
    }

    /** Data segments per request after the caps (seg_max, ring size, maxRequestBytes). */
    int segMax() {
        return segMax;
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
            Run r = new Run(perVcpu, vcpus.size());
            long[] cpuBefore = new long[vcpus.size()];
            Counters[] before = new Counters[vcpus.size()];
            for (VcpuThread v : vcpus) {
                cpuBefore[v.id] = cpuTime(v.thread);
                before[v.id] = v.counters();
            }
            long start = System.nanoTime();
            run = r;
            vcpus.forEach(v -> LockSupport.unpark(v.thread));
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
            long elapsed = System.nanoTime() - start;
            List<VcpuStats> stats = new ArrayList<>();
            for (VcpuThread v : vcpus) {
                long cpu = cpuTime(v.thread);
                Counters now = v.counters();
                Counters b = before[v.id];
                stats.add(new VcpuStats(v.id, cpu < 0 || cpuBefore[v.id] < 0 ? -1 : cpu - cpuBefore[v.id],
                        now.exitNanos - b.exitNanos, now.injectNanos - b.injectNanos, now.notifies - b.notifies,
                        now.interrupts - b.interrupts, now.completions - b.completions, now.requests - b.requests));
            }
            return new RunResult(elapsed, stats);
        } finally {
            running.set(false);
        }
    }

    private static long cpuTime(Thread t) {
        if (!THREADS.isThreadCpuTimeSupported()) {
            return -1;
        }
        return THREADS.getThreadCpuTime(t.getId());
    }

    private void checkUsable() {
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
        Run r = run;
        if (r != null) {
            r.done.completeExceptionally(broken);
        }
        vcpus.forEach(v -> LockSupport.unpark(v.thread));
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        stopped = true;
        Recovery pendingRecovery = recovery;
        if (pendingRecovery != null) {
            pendingRecovery.resumed.countDown();
        }
        Recovery unreported = awaitingFirst.getAndSet(null);
        if (unreported != null) {
            recoveries.accept(unreported.record(config.name(), 0));
        }
        Run r = run;
        if (r != null) {
            r.done.completeExceptionally(new GuestDriverException("machine " + config.name()
                    + " was closed while running jobs"));
        }
        for (VcpuThread v : vcpus) {
            LockSupport.unpark(v.thread);
        }
        for (VcpuThread v : vcpus) {
            if (v.thread != Thread.currentThread()) {
                try {
                    v.thread.join(TimeUnit.SECONDS.toMillis(10));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        try {
            init.reset();
        } finally {
            port.connectInterrupts(null);
            // The vCPUs are gone: nobody else touches the rings now, the locks are not needed.
            for (Hwq q : queues) {
                q.dq.detachUnused();
            }
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

    // Configuration space (VIRTIO 1.2 sections 2.5 and 4.2.2.2).

    private long readConfig64(int offset) {
        for (int i = 0; i < CONFIG_READ_ATTEMPTS; i++) {
            int before = transport.configGeneration();
            long low = transport.readConfig(offset, 4) & 0xFFFF_FFFFL;
            long high = transport.readConfig(offset + 4, 4) & 0xFFFF_FFFFL;
            if (transport.configGeneration() == before) {
                return high << 32 | low;
            }
        }
        throw unstableConfig();
    }

    private int readConfigStable(int offset, int width) {
        for (int i = 0; i < CONFIG_READ_ATTEMPTS; i++) {
            int before = transport.configGeneration();
            int value = transport.readConfig(offset, width);
            if (transport.configGeneration() == before) {
                return value;
            }
        }
        throw unstableConfig();
    }

    private static GuestDriverException unstableConfig() {
        return new GuestDriverException("ConfigGeneration changed on each of " + CONFIG_READ_ATTEMPTS
                + " attempts to read the configuration space (VIRTIO 1.2 section 2.5)");
    }

    /** Busy-waits until {@code deadline} (System.nanoTime based); the cost model, not a test wait. */
    static void spinUntil(long deadline) {
        while (System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
    }

    // ------------------------------------------------------------------------------------------------

    /**
     * The guest's interrupt controller: delivers a vector to the vCPUs {@link #routeVectors} chose, with the
     * cause an MSI-X vector carries (a line's cause is read by the handler).
     */
    private final class Interrupts implements GuestInterrupts {
        private final int gen;

        Interrupts(int gen) {
            this.gen = gen;
        }

        @Override
        public void deviceRemoved() {
            deviceGone(gen);
        }

        @Override
        public void raise(int vector) {
            VcpuThread[][] targets = vectorTargets;
            if (vector < 0 || vector >= targets.length) {
                return; // not mapped (or before the vCPUs run): nobody handles it
            }
            int cause = routing.cause(vector);
            for (VcpuThread v : targets[vector]) {
                if (cause != 0) {
                    v.irqCause.getAndAccumulate(cause, (a, b) -> a | b);
                }
                v.irq.set(true);
                LockSupport.unpark(v.thread);
            }
        }
    }

    /** One hardware queue: virtqueue, its lock, its tags. */
    static final class Hwq {
        final int index;
        /** Replaced by a re-probe after a device removal, while every vCPU is parked. */
        volatile DriverQueue dq;
        QueueLayout layout;
        long indirectArea;
        int maxIndirect;
        /** Every tag of the queue. */
        final List<Req> all = new ArrayList<>();
        final SpinLock lock;
        final int tags;
        final ConcurrentLinkedQueue<Req> free = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Thread> waiters = new ConcurrentLinkedQueue<>();
        /** Incremented after each completion handler run that collected something. */
        final AtomicLong drains = new AtomicLong();
        VcpuThread handler;
        /** A poll queue: no interrupt, callbacks off for good. */
        boolean pollQueue;
        /** Hipri requests in the device; under {@link #lock}. On a normal queue, callbacks are off while > 0. */
        int hipriInFlight;

        Hwq(int index, DriverQueue dq, SpinLock lock, int tags) {
            this.index = index;
            this.dq = dq;
            this.lock = lock;
            this.tags = tags;
        }

        void wakeWaiters() {
            for (Thread t : waiters) {
                LockSupport.unpark(t);
            }
        }
    }

    /** A tag: one request's header and status byte in guest memory, reused. */
    static final class Req {
        final Hwq hwq;
        final int tag;
        final long header;
        final long status;
        Io io;
        VcpuThread owner;
        List<BufferSpec> chain;
        boolean inDevice;
        boolean hipri;

        Req(Hwq hwq, int tag, long header, long status) {
            this.hwq = hwq;
            this.tag = tag;
            this.header = header;
            this.status = status;
        }
    }

    /** One {@link Vcpu#submit} call; touched only by the submitting vCPU. */
    static final class Io {
        final JobRun job;
        final IoCallback callback;
        int partsLeft;
        int status = VirtioBlk.S_OK;

        Io(JobRun job, IoCallback callback, int parts) {
            this.job = job;
            this.callback = callback;
            this.partsLeft = parts;
        }
    }

    record Completion(Io io, int status, long at, boolean hipri) {
    }

    /** A job on its vCPU. */
    static final class JobRun {
        final GuestJob job;
        int inFlight;
        boolean needsStep = true;
        boolean done;
        boolean finished;

        JobRun(GuestJob job) {
            this.job = job;
        }
    }

    /** One {@link #runJobs} call. */
    static final class Run {
        final List<List<GuestJob>> perVcpu;
        final AtomicInteger unfinished;
        final CompletableFuture<Void> done = new CompletableFuture<>();

        Run(List<List<GuestJob>> perVcpu, int vcpus) {
            this.perVcpu = perVcpu;
            this.unfinished = new AtomicInteger(vcpus);
        }

        void vcpuDone() {
            if (unfinished.decrementAndGet() == 0) {
                done.complete(null);
            }
        }
    }

    record Counters(long exitNanos, long injectNanos, long notifies, long interrupts, long completions,
            long requests) {
    }

    /** A guest buffer carved from guest RAM. */
    private final class Buffer implements GuestBuffer {
        private final long address;
        private final int size;

        Buffer(long address, int size) {
            this.address = address;
            this.size = size;
        }

        @Override
        public long address() {
            return address;
        }

        @Override
        public int size() {
            return size;
        }

        @Override
        public ByteBuffer view() {
            ByteBuffer[] views = memory.views(address, size);
            if (views.length != 1) {
                throw new IllegalStateException("guest buffer at 0x" + Long.toHexString(address)
                        + " spans memory regions");
            }
            return views[0].slice().order(ByteOrder.LITTLE_ENDIAN);
        }
    }

    // ------------------------------------------------------------------------------------------------

    /** One vCPU: its thread, its loop, and the {@link Vcpu} face its jobs see. */
    final class VcpuThread implements Vcpu, Runnable, KickPolicy.Queue {
        final int id;
        final Thread thread;
        final Hwq hwq;
        /** Where this vCPU's hipri requests go: its poll queue, or {@link #hwq} without poll queues. */
        final Hwq pollHwq;
        final List<Hwq> affine = new ArrayList<>();
        final AtomicBoolean irq = new AtomicBoolean();
        /** Causes the MSI-X vectors delivered here carried since the handler last ran. */
        final AtomicInteger irqCause = new AtomicInteger();
        /** Completions collected by other vCPUs' handlers for this vCPU's requests (the IPI). */
        final ConcurrentLinkedQueue<Completion> remote = new ConcurrentLinkedQueue<>();
        private final ArrayDeque<Completion> local = new ArrayDeque<>();
        private final List<Req> plug = new ArrayList<>();
        /** Plugged hipri requests for a poll queue ({@link #pollHwq} differs from {@link #hwq}). */
        private final List<Req> pollPlug = new ArrayList<>();
        /** This vCPU's hipri requests in the device, not yet completed here: while > 0 the vCPU polls. */
        private int hipriInFlight;
        /** The queue being dispatched, lent to the kick policy. */
        private Hwq kickHwq;
        private final List<JobRun> jobs = new ArrayList<>();
        private Run seen;
        private JobRun current;
        private int inFlight;
        private long lastProgress;
        private volatile long exitNanos;
        private volatile long injectNanos;
        private volatile long notifies;
        private volatile long interrupts;
        private volatile long completions;
        private volatile long requests;

        VcpuThread(int id) {
            this.id = id;
            this.hwq = queues.get(id % defaultQueues);
            this.pollHwq = pollQueues == 0 ? hwq : queues.get(defaultQueues + id % pollQueues);
            this.kickHwq = hwq;
            this.thread = new Thread(this, "vcpu" + id + "-" + config.name());
            thread.setDaemon(true);
        }

        Counters counters() {
            return new Counters(exitNanos, injectNanos, notifies, interrupts, completions, requests);
        }

        @Override
        public void run() {
            try {
                while (!stopped && broken == null) {
                    safePoint();
                    boolean work = handleInterrupt();
                    work |= pollCompletions();
                    work |= runCompletions();
                    Run r = run;
                    if (r != seen) {
                        seen = r;
                        startRun(r);
                        work = true;
                    }
                    if (!jobs.isEmpty()) {
                        work |= stepJobs();
                    }
                    if (!work && !irq.get() && remote.isEmpty() && run == seen) {
                        checkProgress();
                        if (hipriInFlight > 0) {
                            Thread.onSpinWait(); // polling: the vCPU spins on the used ring, as io_uring iopoll
                        } else {
                            LockSupport.parkNanos(this, IDLE_PARK_NANOS);
                        }
                    }
                }
            } catch (Throwable t) {
                fail(t);
            }
        }

        private void startRun(Run r) {
            jobs.clear();
            for (GuestJob job : r.perVcpu.get(id)) {
                jobs.add(new JobRun(job));
            }
            lastProgress = System.nanoTime();
            if (jobs.isEmpty()) {
                r.vcpuDone();
                return;
            }
            for (JobRun j : jobs) {
                current = j;
                try {
                    j.job.start(this);
                } finally {
                    current = null;
                }
                finishPlug();
            }
        }

        /** Steps the jobs that may progress; finishes those done and drained. Returns true if any ran. */
        private boolean stepJobs() {
            boolean ran = false;
            boolean allFinished = true;
            for (JobRun j : jobs) {
                if (j.finished) {
                    continue;
                }
                if (!j.done && j.needsStep) {
                    ran = true;
                    current = j;
                    try {
                        j.done = !j.job.step(this);
                    } finally {
                        current = null;
                    }
                    finishPlug();
                    // A job that is not done and has nothing in flight is stepped again next round.
                    j.needsStep = !j.done && j.inFlight == 0;
                }
                if (j.done && j.inFlight == 0) {
                    ran = true;
                    j.finished = true;
                    current = j;
                    try {
                        j.job.finish(this);
                    } finally {
                        current = null;
                    }
                    finishPlug();
                    if (j.inFlight > 0) {
                        throw new IllegalStateException("job " + j.job + " submitted I/O from finish()");
                    }
                }
                allFinished &= j.finished;
            }
            if (allFinished) {
                jobs.clear();
                seen.vcpuDone();
            }
            return ran;
        }

        private void checkProgress() {
            if (inFlight == 0 || System.nanoTime() - lastProgress < config.timeout().toNanos()) {
                return;
            }
            int status = transport.status();
            if ((status & DeviceStatus.DEVICE_NEEDS_RESET) != 0 && source != null && started) {
                deviceGone(generation); // as in handleInterrupt: wait for the disk to come back
                lastProgress = System.nanoTime();
                return;
            }
            if ((status & DeviceStatus.DEVICE_NEEDS_RESET) != 0) {
                throw new GuestDriverException("device set DEVICE_NEEDS_RESET without a configuration-change "
                        + "interrupt (status 0x" + Integer.toHexString(status) + ", VIRTIO 1.2 section 2.1.2)");
            }
            long millis = config.timeout().toMillis();
            throw new GuestDriverException("no completion within " + (millis % 1000 == 0 ? millis / 1000 + " s"
                    : millis + " ms") + " (" + inFlight + " requests in flight on vcpu " + id
                    + ", device status 0x" + Integer.toHexString(status) + ")");
        }

        // Completion side --------------------------------------------------------------------------

        /** The interrupt handler: returns true when an interrupt was pending. Runs no job code. */
        private boolean handleInterrupt() {
            if (!irq.getAndSet(false)) {
                return false;
            }
            // vm_interrupt (virtio-mmio): read and acknowledge InterruptStatus (section 4.2.3.4); vp_interrupt
            // (virtio-pci INTx): read the ISR, which clears it (4.1.4.5); MSI-X: the vectors said it.
            int isr = transport.takeInterruptCause(irqCause.getAndSet(0));
            if ((isr & InterruptRouting.CONFIG_CHANGE) != 0) {
                int status = transport.status();
                if ((status & DeviceStatus.DEVICE_NEEDS_RESET) != 0) {
                    if (source != null && started) {
                        // A device whose bundle is going away may fail first (its classes gone): treat it as a
                        // removal and wait for the disk to come back; one that does not come back fails the run.
                        deviceGone(generation);
                        return true;
                    }
                    // Section 2.1.2: an error the device cannot recover from without a reset.
                    throw new GuestDriverException("device needs a reset (DEVICE_NEEDS_RESET set, status 0x"
                            + Integer.toHexString(status) + ", VIRTIO 1.2 section 2.1.2)");
                }
                capacitySectors = readConfig64(VirtioBlk.CFG_CAPACITY);
            }
            boolean mine = false;
            for (Hwq q : affine) {
                // vring_interrupt's more_used check, without the lock: only this vCPU consumes q's used ring.
                mine |= q.dq.hasUsed();
            }
            if (!mine) {
                return true;
            }
            interrupts++;
            long t0 = System.nanoTime();
            spinUntil(t0 + config.injectLatencyNs());
            injectNanos += System.nanoTime() - t0;
            for (Hwq q : affine) {
                if (q.dq.hasUsed()) {
                    drain(q);
                }
            }
            return true;
        }

        /**
         * virtblk_done: collect q's used buffers under its lock, free the tags, route the completions. While
         * hipri requests are in flight on q its callbacks stay off (they are being polled for).
         */
        private void drain(Hwq q) {
            List<Req> done = new ArrayList<>();
            q.lock.lock(id);
            try {
                do {
                    q.dq.disableCallbacks();
                    collect(q, done);
                    if (q.hipriInFlight > 0) {
                        break;
                    }
                } while (!q.dq.enableCallbacks());
            } catch (IllegalStateException e) {
                throw new GuestDriverException("used ring of queue " + q.index + " is corrupt: " + e.getMessage(), e);
            } finally {
                q.lock.unlock();
            }
            route(q, done);
        }

        /** Polls for this vCPU's hipri completions; returns true when the poll reaped something. */
        private boolean pollCompletions() {
            return hipriInFlight > 0 && reap(pollHwq);
        }

        /**
         * virtblk_poll: collect q's used buffers under its lock. On a normal queue, the reap that completes its
         * last hipri request turns callbacks back on and, when used buffers arrived meanwhile (enable_cb returned
         * false), collects again: nothing is left without an interrupt or a poll.
         */
        private boolean reap(Hwq q) {
            List<Req> done = new ArrayList<>();
            q.lock.lock(id);
            try {
                while (true) {
                    collect(q, done);
                    if (q.pollQueue || q.hipriInFlight > 0 || q.dq.enableCallbacks()) {
                        break;
                    }
                }
            } catch (IllegalStateException e) {
                throw new GuestDriverException("used ring of queue " + q.index + " is corrupt: " + e.getMessage(), e);
            } finally {
                q.lock.unlock();
            }
            if (done.isEmpty()) {
                return false;
            }
            route(q, done);
            return true;
        }

        /** Takes every used buffer of q; q's lock is held. */
        private void collect(Hwq q, List<Req> done) {
            UsedBuffer used;
            while ((used = q.dq.getUsed()) != null) {
                Req r = claim(q, used.token());
                if (r.hipri) {
                    q.hipriInFlight--;
                }
                done.add(r);
            }
        }

        /** Frees the tags of collected requests and hands their completions to the submitting vCPUs. */
        private void route(Hwq q, List<Req> done) {
            long now = System.nanoTime();
            noteFirstCompletion(done.size(), now);
            List<VcpuThread> wake = new ArrayList<>();
            for (Req r : done) {
                Completion c = new Completion(r.io, memory.readU8(r.status) & 0xFF, now, r.hipri);
                VcpuThread owner = r.owner;
                r.io = null;
                r.owner = null;
                r.chain = null;
                r.hipri = false;
                q.free.add(r);
                if (owner == this) {
                    local.add(c);
                } else {
                    owner.remote.add(c);
                    if (!wake.contains(owner)) {
                        wake.add(owner);
                    }
                }
            }
            completions += done.size();
            q.drains.incrementAndGet();
            q.wakeWaiters();
            for (VcpuThread v : wake) {
                LockSupport.unpark(v.thread);
            }
        }

        /** Maps a used token back to its request; the device may not invent or repeat buffers (2.7.8). */
        private Req claim(Hwq q, Object token) {
            if (!(token instanceof Req r) || r.hwq != q || !r.inDevice) {
                throw new GuestDriverException("device returned a buffer on queue " + q.index
                        + " that the driver did not make available (VIRTIO 1.2 section 2.7.8)");
            }
            r.inDevice = false;
            return r;
        }

        /** Runs the callbacks of completed I/O; returns true if any completion was processed. */
        private boolean runCompletions() {
            boolean any = false;
            Completion c;
            while ((c = local.poll()) != null || (c = remote.poll()) != null) {
                any = true;
                lastProgress = System.nanoTime();
                if (c.hipri()) {
                    hipriInFlight--;
                }
                Io io = c.io();
                if (io.status == VirtioBlk.S_OK && c.status() != VirtioBlk.S_OK) {
                    io.status = c.status();
                }
                if (--io.partsLeft > 0) {
                    continue;
                }
                inFlight--;
                io.job.inFlight--;
                io.job.needsStep = true;
                current = io.job;
                try {
                    io.callback.done(io.status, c.at());
                } finally {
                    current = null;
                }
                finishPlug();
            }
            return any;
        }

        // Submission side --------------------------------------------------------------------------

        @Override
        public int id() {
            return id;
        }

        @Override
        public int queue() {
            return hwq.index;
        }

        @Override
        public GuestBuffer allocate(int bytes) {
            onThisThread();
            if (bytes <= 0) {
                throw new IllegalArgumentException("buffer size must be positive: " + bytes);
            }
            long address;
            synchronized (ram) {
                address = ram.allocate(bytes, RequestSplitter.PAGE);
            }
            memory.fill(address, bytes, (byte) 0);
            return new Buffer(address, bytes);
        }

        @Override
        public void submit(IoOp op, long offset, int length, GuestBuffer buf, boolean hipri, IoCallback cb) {
            onThisThread();
            Objects.requireNonNull(op, "op");
            Objects.requireNonNull(cb, "cb");
            if (current == null) {
                throw new IllegalStateException("submit outside a job's start, step, finish or callback");
            }
            if (broken != null || stopped) {
                checkUsable();
            }
            if (op == IoOp.FLUSH) {
                if (length != 0 || buf != null) {
                    throw new IllegalArgumentException("a flush has no data (VIRTIO 1.2 section 5.2.6.1)");
                }
                Io io = new Io(current, cb, 1);
                count(io);
                if (!hasFlush()) {
                    // Linux: without VIRTIO_BLK_F_FLUSH there is no volatile cache, a flush completes at once.
                    local.add(new Completion(io, VirtioBlk.S_OK, System.nanoTime(), false));
                    return;
                }
                queueRequest(io, op, 0, List.of(), hipri);
                return;
            }
            checkData(op, offset, length, buf);
            List<RequestSplitter.Part> parts = RequestSplitter.split(offset, length, buf.address(), segMax,
                    config.maxRequestBytes());
            Io io = new Io(current, cb, parts.size());
            count(io);
            for (RequestSplitter.Part p : parts) {
                List<BufferSpec> data = new ArrayList<>(p.segments().size());
                for (RequestSplitter.Segment s : p.segments()) {
                    data.add(op == IoOp.READ ? BufferSpec.writable(s.address(), s.length())
                            : BufferSpec.readable(s.address(), s.length()));
                }
                queueRequest(io, op, p.offset() / VirtioBlk.SECTOR_SIZE, data, hipri);
            }
        }

        private void count(Io io) {
            inFlight++;
            io.job.inFlight++;
            lastProgress = inFlight == 1 ? System.nanoTime() : lastProgress;
        }

        private void checkData(IoOp op, long offset, int length, GuestBuffer buf) {
            Objects.requireNonNull(buf, "buf");
            if (offset < 0 || offset % VirtioBlk.SECTOR_SIZE != 0) {
                throw new IllegalArgumentException("offset " + offset + " must be a non-negative multiple of 512 "
                        + "(VIRTIO 1.2 section 5.2.6.1)");
            }
            // Section 5.2.6.1: the data of IN and OUT requests is a multiple of 512 bytes.
            if (length <= 0 || length % VirtioBlk.SECTOR_SIZE != 0 || length > buf.size()) {
                throw new IllegalArgumentException("length " + length + " must be a positive multiple of 512 within "
                        + "the " + buf.size() + "-byte buffer (VIRTIO 1.2 section 5.2.6.1)");
            }
            if (buf.address() % VirtioBlk.SECTOR_SIZE != 0) {
                throw new IllegalArgumentException("buffer at 0x" + Long.toHexString(buf.address())
                        + " is not 512-byte aligned");
            }
            if (offset > capacityBytes() - length) {
                throw new IllegalArgumentException("I/O of " + length + " bytes at offset " + offset
                        + " passes the capacity of " + capacityBytes() + " bytes");
            }
            if (op == IoOp.WRITE && readOnly()) {
                throw new IllegalArgumentException("disk " + config.name()
                        + " is read-only (VIRTIO_BLK_F_RO, VIRTIO 1.2 section 5.2.6.2)");
            }
        }

        /**
         * Takes a tag of the request's queue (waiting if none), fills the header, and puts the request on the
         * plug. A hipri request goes to the vCPU's poll queue when there are poll queues.
         */
        private void queueRequest(Io io, IoOp op, long sector, List<BufferSpec> data, boolean hipri) {
            Hwq q = hipri ? pollHwq : hwq;
            Req r = q.free.poll();
            if (r == null) {
                // blk_mq_get_tag: run the hardware queue (our plug) before sleeping for a tag.
                dispatchPlug();
                r = awaitTag(q);
            }
            r.hipri = hipri;
            memory.writeU32(r.header, op.requestType());
            memory.writeU32(r.header + 4, 0);
            memory.writeU64(r.header + 8, sector);
            memory.writeU8(r.status, STATUS_UNWRITTEN);
            List<BufferSpec> chain = new ArrayList<>(data.size() + 2);
            chain.add(BufferSpec.readable(r.header, VirtioBlk.HEADER_SIZE));
            chain.addAll(data);
            chain.add(BufferSpec.writable(r.status, 1));
            r.chain = chain;
            r.io = io;
            r.owner = this;
            List<Req> p = q == hwq ? plug : pollPlug;
            p.add(r);
            requests++;
            if (p.size() >= PLUG_FLUSH_COUNT) {
                dispatchPlug();
            }
        }

        private Req awaitTag(Hwq q) {
            Req[] got = new Req[1];
            awaitQueue(q, () -> (got[0] = q.free.poll()) != null, "a free tag");
            return got[0];
        }

        /**
         * Waits until {@code ready} holds for queue {@code q}, handling this vCPU's interrupts and polling for
         * its hipri completions meanwhile (their callbacks run later, from the loop). Bounded by the machine's
         * timeout.
         */
        private void awaitQueue(Hwq q, BooleanSupplier ready, String what) {
            long deadline = System.nanoTime() + config.timeout().toNanos();
            while (!ready.getAsBoolean()) {
                q.waiters.add(thread);
                try {
                    if (safePoint()) {
                        deadline = System.nanoTime() + config.timeout().toNanos(); // the device was away
                    }
                    if (ready.getAsBoolean()) {
                        return;
                    }
                    if (handleInterrupt() || pollCompletions()) {
                        continue;
                    }
                    if (broken != null || stopped) {
                        checkUsable();
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new GuestDriverException("vcpu " + id + " waited " + config.timeout().toMillis()
                                + " ms for " + what + " on queue " + q.index + " (" + inFlight
                                + " requests in flight, device status 0x" + Integer.toHexString(transport.status())
                                + ")");
                    }
                    if (hipriInFlight > 0) {
                        Thread.onSpinWait();
                    } else {
                        LockSupport.parkNanos(this, Math.min(left, IDLE_PARK_NANOS));
                    }
                } finally {
                    q.waiters.remove(thread);
                }
            }
        }

        @Override
        public void commit() {
            onThisThread();
            dispatchPlug();
        }

        private void finishPlug() {
            if (!plug.isEmpty() || !pollPlug.isEmpty()) {
                dispatchPlug();
            }
        }

        /** Dispatches the plugged requests of both queues. */
        private void dispatchPlug() {
            dispatch(plug, hwq);
            dispatch(pollPlug, pollHwq);
        }

        /**
         * virtio_queue_rq over a plug list for queue {@code q}, kicking through the policy on the last request.
         * A hipri request on a normal queue turns its callbacks off first (toggling mode).
         */
        private void dispatch(List<Req> list, Hwq q) {
            int n = list.size();
            if (n == 0) {
                return;
            }
            kickHwq = q;
            boolean indirectChains = indirect;
            for (int i = 0; i < n; i++) {
                Req r = list.get(i);
                boolean last = i == n - 1;
                q.lock.lock(id);
                toggleOff(q, r);
                while (!q.dq.add(r.chain, indirectChains && r.chain.size() > 1, r)) {
                    // BLK_STS_DEV_RESOURCE: kick what this round added, wait for completions, retry.
                    long drains = q.drains.get();
                    if (i > 0) {
                        kickLocked();
                    } else {
                        q.lock.unlock();
                    }
                    awaitQueue(q, () -> q.drains.get() != drains, "free descriptors");
                    kickHwq = q;
                    q.lock.lock(id);
                    toggleOff(q, r);
                }
                r.inDevice = true;
                if (r.hipri) {
                    q.hipriInFlight++;
                    hipriInFlight++;
                }
                if (last) {
                    kickLocked();
                } else {
                    q.lock.unlock();
                }
            }
            list.clear();
        }

        /** A hipri request on a normal queue: callbacks off before it is added (seed 003); q's lock is held. */
        private void toggleOff(Hwq q, Req r) {
            if (r.hipri && !q.pollQueue && q.hipriInFlight == 0) {
                q.dq.disableCallbacks();
            }
        }

        /** Hands the locked queue to the kick policy, which must release the lock. */
        private void kickLocked() {
            boolean returned = false;
            try {
                policy.kick(this);
                returned = true;
            } finally {
                if (kickHwq.lock.isHeldByCurrentThread()) {
                    kickHwq.lock.unlock();
                    if (returned) {
                        throw new IllegalStateException("kick policy " + config.kickPolicy()
                                + " returned with the lock of queue " + kickHwq.index + " held");
                    }
                }
            }
        }

        // KickPolicy.Queue: this vCPU's hardware queue, lent to the policy for one kick.

        @Override
        public int index() {
            return kickHwq.index;
        }

        @Override
        public boolean kickPrepare() {
            if (!kickHwq.lock.isHeldByCurrentThread()) {
                throw new IllegalStateException("kickPrepare of queue " + kickHwq.index + " without its lock");
            }
            return kickHwq.dq.kickPrepare();
        }

        @Override
        public void notifyDevice() {
            long t0 = System.nanoTime();
            transport.notify(kickHwq.index);
            notifies++;
            spinUntil(t0 + config.exitLatencyNs());
            exitNanos += System.nanoTime() - t0;
        }

        @Override
        public void unlock() {
            kickHwq.lock.unlock();
        }

        @Override
        public int inFlight() {
            return inFlight;
        }

        @Override
        public long nowNanos() {
            return System.nanoTime();
        }

        /**
         * Parks this vCPU while the device is away (no lock held here); returns true when it did. The recovery
         * runs while every vCPU is parked, so nobody else touches the rings or the transport meanwhile.
         */
        private boolean safePoint() {
            Recovery r = recovery;
            if (r == null) {
                return false;
            }
            r.parked.countDown();
            try {
                while (!r.resumed.await(IDLE_PARK_NANOS, TimeUnit.NANOSECONDS)) {
                    if (stopped || broken != null) {
                        break;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new GuestDriverException("vcpu " + id + " interrupted while the device was away");
            }
            lastProgress = System.nanoTime();
            return true;
        }

        private void onThisThread() {
            if (Thread.currentThread() != thread) {
                throw new IllegalStateException("vcpu " + id + " used from thread " + Thread.currentThread().getName());
            }
        }

        @Override
        public String toString() {
            return "vcpu" + id;
        }
    }

    // Device removal and return ------------------------------------------------------------------

    /** One removal: the vCPUs park, the recovery thread brings the device back. */
    static final class Recovery {
        final long removedAt;
        final java.util.concurrent.CountDownLatch parked;
        final java.util.concurrent.CountDownLatch resumed = new java.util.concurrent.CountDownLatch(1);
        volatile long probedAt;
        volatile int collected;
        volatile int resubmitted;
        volatile String error;

        Recovery(long removedAt, int vcpus) {
            this.removedAt = removedAt;
            this.parked = new java.util.concurrent.CountDownLatch(vcpus);
        }

        DeviceRecovery record(String disk, long firstCompletion) {
            return new DeviceRecovery(disk, removedAt, probedAt, firstCompletion, collected, resubmitted, error);
        }
    }

    /** A returned device the guest cannot resume on: waiting for another return would not help. */
    static final class NotTheSameDevice extends GuestDriverException {
        private static final long serialVersionUID = 1L;

        NotTheSameDevice(String message) {
            super(message);
        }
    }

    /** The transport of generation {@code gen} says the device is gone. */
    private void deviceGone(int gen) {
        Recovery r;
        synchronized (this) {
            if (gen != generation || closed || stopped || broken != null) {
                return;
            }
            if (recovery != null) {
                removedAgain = true; // the device the recovery is probing went too: it starts over
                return;
            }
            if (!started) {
                removedWhileBooting = true; // boot fails; a caller with a source boots again
                return;
            }
            if (source == null) {
                fail(new GuestDriverException("the device of " + config.name() + " was removed (its transport was "
                        + "closed: disk detached, or a bundle serving it stopped)"));
                return;
            }
            r = new Recovery(System.nanoTime(), vcpus.size());
            recovery = r;
        }
        Thread t = new Thread(() -> recover(r), "reprobe-" + config.name());
        t.setDaemon(true);
        t.start();
        vcpus.forEach(v -> LockSupport.unpark(v.thread));
    }

    /** Freeze, collect, wait for the device, re-probe, resubmit, thaw (see the class comment). */
    private void recover(Recovery r) {
        try {
            awaitParked(r);
            GuestPort dead = port;
            long deadline = System.nanoTime() + config.timeout().toNanos();
            while (true) {
                removedAgain = false;
                // The disk's port changes only once the old device's reset finished (its transport closed), so
                // its used rings are final by then, also when DEVICE_NEEDS_RESET and not a removal started this.
                GuestPort next = awaitReturn(dead, deadline);
                r.collected += collectAfterRemoval();
                try {
                    reprobe(next, source.virtqueues());
                } catch (RuntimeException | LinkageError e) {
                    // LinkageError: the port or rings came from a bundle revision that was updated meanwhile.
                    if (e instanceof NotTheSameDevice || System.nanoTime() - deadline >= 0 || stopped) {
                        throw e;
                    }
                    dead = next; // it went again while we probed it, or it is not ready: wait for the next one
                    continue;
                }
                r.resubmitted += resubmit();
                r.probedAt = System.nanoTime();
                if (!removedAgain) {
                    break;
                }
                dead = next;
            }
            Recovery unreported = awaitingFirst.getAndSet(r);
            if (unreported != null) {
                recoveries.accept(unreported.record(config.name(), 0)); // no completion between two removals
            }
        } catch (RuntimeException | Error e) {
            r.error = e.getMessage();
            recoveries.accept(r.record(config.name(), 0));
            fail(e instanceof GuestDriverException ? e : new GuestDriverException("device of " + config.name()
                    + " could not be brought back: " + e.getMessage(), e));
        } finally {
            recovery = null;
            r.resumed.countDown();
            for (Hwq q : queues) {
                q.drains.incrementAndGet();
                q.wakeWaiters();
            }
            vcpus.forEach(v -> LockSupport.unpark(v.thread));
        }
    }

    private void awaitParked(Recovery r) {
        long deadline = System.nanoTime() + config.timeout().toNanos();
        try {
            while (!r.parked.await(IDLE_PARK_NANOS, TimeUnit.NANOSECONDS)) {
                if (stopped || broken != null) {
                    throw new GuestDriverException("machine " + config.name() + " stopped while its device was away");
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new GuestDriverException("the vCPUs of " + config.name() + " did not stop within "
                            + config.timeout().toMillis() + " ms after the device was removed");
                }
                vcpus.forEach(v -> LockSupport.unpark(v.thread));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new GuestDriverException("interrupted while the device was away");
        }
    }

    /**
     * Takes what the removed device completed from the used rings (its reset waited for everything it had in
     * flight, so these rings are final) and hands the completions to their vCPUs, to run once they thaw.
     */
    private int collectAfterRemoval() {
        int n = 0;
        long now = System.nanoTime();
        for (Hwq q : queues) {
            UsedBuffer used;
            while ((used = q.dq.getUsed()) != null) {
                if (!(used.token() instanceof Req req) || req.hwq != q || !req.inDevice) {
                    throw new GuestDriverException("device returned a buffer on queue " + q.index
                            + " that the driver did not make available (VIRTIO 1.2 section 2.7.8)");
                }
                req.inDevice = false;
                if (req.hipri) {
                    q.hipriInFlight--;
                }
                Completion c = new Completion(req.io, memory.readU8(req.status) & 0xFF, now, req.hipri);
                VcpuThread owner = req.owner;
                req.io = null;
                req.owner = null;
                req.chain = null;
                req.hipri = false;
                q.free.add(req);
                owner.remote.add(c);
                n++;
            }
        }
        noteFirstCompletion(n, now);
        return n;
    }

    /** Waits for the disk's port to be another than {@code dead}. */
    private GuestPort awaitReturn(GuestPort dead, long deadline) {
        while (true) {
            if (stopped) {
                throw new GuestDriverException("machine " + config.name() + " closed while its device was away");
            }
            GuestPort next = source.port();
            if (next != null && next != dead && source.virtqueues() != null) {
                return next;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new GuestDriverException("the device of " + config.name() + " was removed and did not come "
                        + "back within " + config.timeout().toMillis() + " ms");
            }
            // Nothing to wait on: the disk comes back through OSGi services and ConfigAdmin in other bundles.
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    /** Initialises the returned device with new rings at the old addresses (sections 3.1.1 and 2.7). */
    private void reprobe(GuestPort next, VirtqueueFactory rings) {
        if (rings == null) {
            throw new GuestDriverException("no virtqueue factory");
        }
        // The guest keeps its memory: the returned device must see it (same shared pages).
        long cookie = System.nanoTime() ^ 0x5DEECE66DL;
        memory.writeU64(probeCell, cookie);
        if (next.memory().readU64(probeCell) != cookie) {
            throw new NotTheSameDevice("the device of " + config.name() + " came back with other guest memory;"
                    + " the guest's buffers are not there, so it cannot resume");
        }
        VirtioTransportDriver t = VirtioTransportDriver.forPort(next);
        VirtioInit i = new VirtioInit(t, config.timeout());
        long f = i.negotiate(DeviceIds.BLOCK, config.supportedFeatures());
        if (f != features) {
            i.fail();
            throw new NotTheSameDevice("the device of " + config.name() + " came back with features 0x"
                    + Long.toHexString(f) + " instead of 0x" + Long.toHexString(features));
        }
        for (Hwq q : queues) {
            int max = t.queueMaxSize(q.index);
            if (max < q.layout.size()) {
                i.fail();
                throw new GuestDriverException("queue " + q.index + " came back with QueueNumMax " + max
                        + ", smaller than its ring of " + q.layout.size());
            }
        }
        int gen = generation + 1;
        generation = gen;
        port = next;
        transport = t;
        init = i;
        capacitySectors = readConfig64(VirtioBlk.CFG_CAPACITY);
        next.connectInterrupts(new Interrupts(gen));
        List<QueueLayout> layouts = new ArrayList<>();
        for (Hwq q : queues) {
            q.dq = rings.createDriverQueue(memory, q.layout, features, q.indirectArea, q.maxIndirect);
            layouts.add(q.layout);
            if (q.pollQueue || q.hipriInFlight > 0) {
                q.dq.disableCallbacks();
            }
        }
        routing = t.findQueues(layouts);
        vectorTargets = routeVectors();
        i.driverOk();
    }

    /** Submits again every request that was in the device and not completed; kicks each queue. */
    private int resubmit() {
        int n = 0;
        for (Hwq q : queues) {
            int added = 0;
            for (Req req : q.all) {
                if (!req.inDevice) {
                    continue;
                }
                if (!q.dq.add(req.chain, indirect && req.chain.size() > 1, req)) {
                    throw new GuestDriverException("queue " + q.index + " has no room to resubmit the requests it had"
                            + " in flight");
                }
                added++;
            }
            if (added > 0 && q.dq.kickPrepare()) {
                transport.notify(q.index);
            }
            n += added;
        }
        return n;
    }

    /** Reports the last recovery once a request completes after it. */
    private void noteFirstCompletion(int completed, long now) {
        if (completed == 0) {
            return;
        }
        Recovery a = awaitingFirst.get();
        if (a != null && awaitingFirst.compareAndSet(a, null)) {
            recoveries.accept(a.record(config.name(), now));
        }
    }
}
